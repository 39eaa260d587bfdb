"""The HTTP layer: app wiring, routes, auth, OpenAPI descriptions.

Routes parse and answer; the chat request path itself lives in `proxy.chat`.
"""

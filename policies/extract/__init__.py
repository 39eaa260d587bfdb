"""One message to memory operations: statements, values, revisions and their links, choices,
observations (the rule extractor and its parts).
"""

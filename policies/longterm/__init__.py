"""Long-term memory across conversations: what is consolidated, and what is brought back
(backfill).
"""

"""The forwarded context under the budget: the assemblers (backbone, layered, window), digests, the
rolling summary, recall, compaction and prompt-cache hints and pricing.
"""

"""Text and its words, zh + en: sentences, cue lexicons, values, dates, names, lexical matching.
Depends on nothing else in policies.
"""

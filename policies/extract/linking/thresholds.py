"""How sure a linker must be before it links, for every linker in one place.

Most are floors on the scores of `TargetFinder` (`best`, `lexical`: word overlap
with an item, 0..1, plus value bonuses for `best`); `DUPLICATE_MIN` is a floor on
plain similarity, `NEAR_CHARS` a count of shared characters. High enough that a
generic new statement replaces nothing, low enough that a revision restating only
its subject still finds its item; side by side, so one can be read against the
others.
"""

EXPLICIT_MIN = 0.15
IMPLICIT_MIN = 0.25
CONFLICT_MIN = 0.2
DUPLICATE_MIN = 0.8
REVOKE_MIN = 0.12
LEXICAL_MIN = 0.06
SUBJECT_ONLY_MIN = 0.35
CHOICE_MIN = 0.2  # a value-less revision of an item that holds a value
VALUE_TARGET_MIN = 0.2  # a revision bringing a value, of an item holding none
NEAR_CHARS = 3  # shared CJK characters that name a directive near a revocation cue

"""Relative changes to a quantity the user stated earlier (zh + en).

People revise numbers against what they said before instead of restating
them: "let's allow two more than I said", "add another $300 to the
budget", "cut it by 10%", "push the launch back a week", "再加两个",
"预算砍掉两千", "提前半小时". Such a sentence holds only the difference; read
as a statement of its own it either adds a meaningless item ("two more") or
replaces the wrong value, and the old number stays current.

This package reads the change (a direction cue and an amount, with or
without a unit), finds the one live item that holds the quantity it
changes, computes the new value, and supersedes that item with its text
restated at the new value plus the derivation, e.g. "no more than 6 fish
total (4 + 2: "let's allow two more")". The old item becomes superseded, so
the stale filter marks old mentions of it.

Finding the holder is the risky part: a wrong link presents a made-up
number as the requirement, which is worse than leaving the change
unresolved. A holder must measure the same thing (same counted noun or
classifier, same currency, a clock time for a shift in hours, a calendar
date for a shift in days), and, unless the change names its counted noun,
the topic of the sentence (or of the sentence before it) must name it.
Among holders that fit equally, the most recent wins. When nothing fits,
nothing happens. Absolute changes ("make it 6", "改成8名") are not handled
here: they state the new value and the revision resolver links them.

The package is split by concern: `amounts` (what a change is, and the number, money,
duration and classifier fragments shared by all), `reading` (the changes a sentence
decides), `held` (the quantities an item holds), `clauses` (the clause around either,
and the derivation appended to a restatement), `fitting` (how well a quantity fits a
change), `holder` (which item is changed), `dates` and `clock` (shifting them),
`restate` (the new value and the restated text) and `resolve` (the entry point). Its
cue patterns are data: `policies/rules/<lang>/relative.yaml`.
"""

from policies.extract.relative.amounts import Change
from policies.extract.relative.reading import read_changes
from policies.extract.relative.resolve import Relative, relative_changes

__all__ = ["Change", "Relative", "read_changes", "relative_changes"]

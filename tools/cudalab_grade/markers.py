"""The markers of a student region in a solution file, for every tool that reads them
(make-starter, which writes the starter from them, make-release and mutate):

    // BEGIN SOLUTION        the reference code follows (its indentation is the region's)
    // STARTER:              optional: the starter's text follows, each line commented out
    // END SOLUTION
"""
from __future__ import annotations

import re

BEGIN = re.compile(r"^(\s*)// BEGIN SOLUTION\s*$")
STARTER = re.compile(r"^\s*// STARTER:\s*$")
END = re.compile(r"^\s*// END SOLUTION\s*$")

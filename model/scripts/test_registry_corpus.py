"""Tests of registry_corpus.py's cut on a small package written here (no download):
    python3 -m unittest model/scripts/test_registry_corpus.py
"""

import collections
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import registry_corpus  # noqa: E402

HELPERS = '''\
import re

WORD = re.compile(r"[a-z]+")


def words(text):
    return WORD.findall(text)
'''

TEXT = '''\
import json
import numpy
from .helpers import words

LIMIT = 3


def unused():
    return json.dumps(1)


def count(text):
    """Words, at most LIMIT.

    >>> count("a b c d")
    3
    """
    return min(len(words(text)), LIMIT)


def as_array(text):
    """
    >>> as_array("x")
    """
    return numpy.array(text)
'''


class CutTest(unittest.TestCase):
    def setUp(self):
        self.folder = Path(tempfile.mkdtemp())
        package = self.folder / "site" / "pkg"
        package.mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "helpers.py").write_text(HELPERS)
        (package / "text.py").write_text(TEXT)
        self.counts = collections.Counter()
        pkg = registry_corpus.Package(self.folder / "site", "pkg", set(sys.stdlib_module_names))
        registry_corpus.cut_module(pkg.module("pkg.text"), self.folder / "out", 120, self.counts)

    def test_a_function_is_cut_with_what_it_reaches_in_its_own_and_sibling_modules(self):
        program = (self.folder / "out" / "pkg.text.count.py").read_text()
        self.assertEqual(program, textwrap.dedent('''\
            import re

            WORD = re.compile(r"[a-z]+")

            def words(text):
                return WORD.findall(text)

            LIMIT = 3

            def count(text):
                """Words, at most LIMIT.

                >>> count("a b c d")
                3
                """
                return min(len(words(text)), LIMIT)
            '''))
        scope = {}
        exec(program, scope)
        self.assertEqual(eval('count("a b c d")', scope), 3)
        self.assertEqual(self.counts["programs that take definitions from sibling modules"], 1)

    def test_a_function_that_needs_a_third_party_name_is_left_out_and_counted(self):
        self.assertFalse((self.folder / "out" / "pkg.text.as_array.py").exists())
        self.assertEqual(self.counts["left out: needs a name from outside the standard library"], 1)
        self.assertEqual(self.counts["programs written"], 1)


if __name__ == "__main__":
    unittest.main()

"""The Python examples of docs/python.md and README.md print what the pages say.

Every ```python block holding `>>>` lines is a doctest, run from `conformance/` (where the pages
say the cells run) with the package installed; `...` in an expected output stands for any text
(doctest's ELLIPSIS) and runs of spaces compare equal. Files the examples write go to a
temporary directory: `/tmp/` in an example is that directory. The cells of a page share their
names, as a notebook's do.
"""

import doctest
import os
import re
import tempfile

import pytest

from conftest import CONFORMANCE, REPO

PAGES = ["docs/python.md", "README.md"]


def examples():
    out = []
    for page in PAGES:
        text = (REPO / page).read_text()
        for match in re.finditer(r"```python\n(.*?)```", text, re.S):
            block = match.group(1)
            if ">>>" not in block:
                continue
            line = text.count("\n", 0, match.start()) + 2
            out.append(pytest.param(page, line, block, id=f"{page}:{line}"))
    return out


# The cells of one page share their names (`p`, `df`, ...), as a notebook's do.
GLOBALS = {}


@pytest.mark.parametrize("page,line,block", examples())
def test_example_prints_what_the_page_says(page, line, block, tmp_path, monkeypatch):
    monkeypatch.chdir(CONFORMANCE)
    # Frames print whole, as in a notebook or a wide terminal (pandas cuts them at 80 columns
    # when it cannot see a terminal).
    pandas = pytest.importorskip("pandas")
    with pandas.option_context("display.width", 250, "display.max_columns", 50):
        run_cell(page, line, block, tmp_path)


def run_cell(page, line, block, tmp_path):
    block = block.replace("/tmp/", f"{tmp_path}/")
    parser = doctest.DocTestParser()
    globs = GLOBALS.setdefault(page, {})
    test = parser.get_doctest(block, globs, f"{page}:{line}", page, line)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    out = []
    runner.run(test, out=out.append, clear_globs=False)
    # A doctest runs in a copy of the names it is given: keep what the cell defined.
    globs.update(test.globs)
    assert runner.failures == 0, "".join(out)


def test_the_pages_have_examples():
    assert len(examples()) >= 8

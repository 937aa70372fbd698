#!/bin/bash
# tests/compat/python-suite.sh: Python's regression suite natively and under
# moat, compared per module and per test case (see python-suite.py).
#   tests/compat/python-suite.sh                     the issue's module list
#   tests/compat/python-suite.sh --quick             a fast subset
#   tests/compat/python-suite.sh --report docs/compat/python-suite.md   regenerate the report
exec nice /usr/bin/python3 "$(dirname "$0")/python-suite.py" "$@"

#!/usr/bin/python3
"""tests/compat/python-suite.py: Python's regression suite natively and under moat.

Runs Debian's /usr/bin/python3 -m test (libpython3.11-testsuite) on a module
list twice with the same arguments: natively, then inside one moat sandbox
(regrtest's -j workers run inside it), each writing JUnit XML.  Compares per
module and per test case (passed / failed / skipped) and prints the
differences.  tests/compat/python-exclude.txt lists the cases that are not
compared (see its header).  Exit status 0 when every case that passes natively
passes under moat (or is excluded), 1 otherwise, 2 on a usage/set-up error.

  tests/compat/python-suite.sh [--report docs/compat/python-suite.md] [MODULE...]
"""
import argparse
import fnmatch
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

PY = "/usr/bin/python3"  # Debian's interpreter (not a pyenv python on PATH)
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MODULES = ("test_os test_posix test_shutil test_tempfile test_subprocess test_signal "
           "test_select test_selectors test_fcntl test_pathlib test_glob test_fileio "
           "test_io test_mmap test_pty test_tarfile test_zipfile test_socket "
           "test_threading test_time test_logging test_compileall test_venv").split()
QUICK = "test_posix test_tempfile test_fcntl test_glob test_fileio test_mmap test_select".split()


def load_exclusions(path):
    """Lines 'SIDE PATTERN REASON': SIDE both (not run on either side), moat
    (not run under moat: it hangs or would end the run) or xfail (run on both
    sides; a difference is expected and reported, not counted)."""
    out = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split(None, 2)
            if len(parts) < 3 or parts[0] not in ("both", "moat", "xfail"):
                sys.exit(f"{path}:{n}: want 'both|moat|xfail PATTERN REASON'")
            out.append(tuple(parts))
    return out


def matches(pattern, test_id):
    # regrtest's own rule (test.support._compile_match_function): the
    # pattern matches the whole id or one of its dotted parts.
    rx = re.compile(fnmatch.translate(pattern))
    return bool(rx.match(test_id)) or any(rx.match(p) for p in test_id.split("."))


def excluded(excl, test_id, sides):
    for side, pat, why in excl:
        if side in sides and matches(pat, test_id):
            return side, pat, why
    return None


def parse_xml(path):
    """{test id: (status, message)}, status pass|fail|skip."""
    cases = {}
    if not os.path.exists(path):
        return cases
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError:
        return cases
    for tc in root.iter("testcase"):
        name = tc.get("name", "?")
        st, msg = "pass", ""
        for child in tc:
            if child.tag in ("failure", "error"):
                st, msg = "fail", (child.get("message") or child.get("type") or "").strip()
                break
            if child.tag == "skipped":
                st, msg = "skip", (child.text or child.get("message") or "").strip()
        cases[name] = (st, msg.splitlines()[0][:160] if msg else "")
    return cases


def parse_modules(log):
    """{module: regrtest's verdict} from the progress lines."""
    res = {}
    rx = re.compile(r"\[\s*\d+/\d+(?:/\d+)?\] (test_\w+)(?: (.*))?$")
    for line in log.splitlines():
        m = rx.search(line)
        if m:
            res[m.group(1)] = (m.group(2) or "passed").split(" -- ")[0].strip()
    return res


def run_side(side, args, out, modules, excl):
    ign = os.path.join(out, f"ignore-{side}.txt")
    with open(ign, "w") as f:
        for s, pat, _ in excl:
            if s == "both" or (s == "moat" and side == "moat"):
                f.write(pat + "\n")
    xmlname = f"{side}.xml"
    inner = ["-m", "test", "-j", str(args.jobs), "--timeout", str(args.timeout),
             "--ignorefile", None, "--junit-xml", None] + list(modules)
    env = dict(os.environ)
    if side == "native":
        inner[inner.index("--ignorefile") + 1] = ign
        inner[inner.index("--junit-xml") + 1] = os.path.join(out, xmlname)
        cmd = [PY] + inner
        cwd = out
    else:
        inner[inner.index("--ignorefile") + 1] = "/out/" + os.path.basename(ign)
        inner[inner.index("--junit-xml") + 1] = "/out/" + xmlname
        # one sandbox; the output directory is the only writable host path
        # --overlay memory: a writable (disposable) root, as the native run
        # as root has (tests that write next to the stdlib: test_zipfile)
        cmd = [args.moat, "run", "--overlay", "memory", "--bind", f"{out}:/out:rw", "--workdir", "/out",
               "--timeout", str(args.total_timeout), "--", PY] + inner
        cwd = out
    t0 = time.monotonic()
    with open(os.path.join(out, f"{side}.log"), "w") as logf:
        p = subprocess.run(cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=logf,
                           stderr=subprocess.STDOUT, env=env,
                           timeout=args.total_timeout + 60)
    dt = time.monotonic() - t0
    with open(os.path.join(out, f"{side}.secs"), "w") as f:
        f.write(f"{dt:.1f}\n")
    return load_side(side, out)


def load_side(side, out):
    with open(os.path.join(out, f"{side}.secs")) as f:
        dt = float(f.read())
    with open(os.path.join(out, f"{side}.log"), errors="replace") as f:
        log = f.read()
    return {"secs": dt, "cases": parse_xml(os.path.join(out, f"{side}.xml")),
            "modules": parse_modules(log)}


def module_of(test_id):
    parts = test_id.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "test" else parts[0]


def counts(cases, mod):
    c = {"pass": 0, "fail": 0, "skip": 0}
    for k, (st, _) in cases.items():
        if module_of(k) == mod:
            c[st] += 1
    return c


def compare(nat, moat, modules, excl):
    """Differences: (test id, native status, moat status, moat message, exclusion or None)."""
    diffs = []
    for k in sorted(set(nat["cases"]) | set(moat["cases"])):
        if module_of(k) not in modules:
            continue
        ns = nat["cases"].get(k, ("missing", ""))
        ms = moat["cases"].get(k, ("missing", ""))
        if ns[0] != "pass" or ms[0] == "pass":
            continue
        diffs.append((k, ns[0], ms[0], ms[1], excluded(excl, k, ("xfail", "moat", "both"))))
    # a module that passed natively but whose worker crashed or timed out under moat
    for mod in modules:
        nv, mv = nat["modules"].get(mod, "?"), moat["modules"].get(mod, "?")
        if nv.startswith("passed") and not mv.startswith("passed") and not any(
                module_of(d[0]) == mod for d in diffs):
            diffs.append((mod, "passed", mv or "?", "module verdict", None))
    return diffs


def report_md(args, nat, moat, modules, excl, diffs):
    L = []
    L.append("# Python's regression suite: native and under moat\n")
    L.append("Generated by `tests/compat/python-suite.sh --report docs/compat/python-suite.md` "
             f"(Debian's {PY}, `python3 -m test -j{args.jobs} --timeout {args.timeout}`, "
             "the same arguments natively and inside one moat sandbox). "
             "Exclusions: `tests/compat/python-exclude.txt`.\n")
    L.append(f"Native: {nat['secs']:.0f} s; under moat: {moat['secs']:.0f} s.\n")
    L.append("| module | native pass/fail/skip | moat pass/fail/skip | regrtest native | regrtest moat | differences (excluded) |")
    L.append("|---|---|---|---|---|---|")
    for mod in modules:
        a, b = counts(nat["cases"], mod), counts(moat["cases"], mod)
        d = [x for x in diffs if module_of(x[0]) == mod or x[0] == mod]
        dx = sum(1 for x in d if x[4])
        L.append(f"| {mod} | {a['pass']}/{a['fail']}/{a['skip']} | {b['pass']}/{b['fail']}/{b['skip']} | "
                 f"{nat['modules'].get(mod, '?')} | {moat['modules'].get(mod, '?')} | {len(d)} ({dx}) |")
    tot = lambda cs: {s: sum(1 for v in cs.values() if v[0] == s) for s in ("pass", "fail", "skip")}
    a, b = tot(nat["cases"]), tot(moat["cases"])
    L.append(f"| **total** | {a['pass']}/{a['fail']}/{a['skip']} | {b['pass']}/{b['fail']}/{b['skip']} | | | "
             f"{len(diffs)} ({sum(1 for x in diffs if x[4])}) |\n")
    open_ = [d for d in diffs if not d[4]]
    L.append(f"Cases that pass natively and not under moat, not excluded: **{len(open_)}**.\n")
    nf = sorted(k for k, v in nat["cases"].items() if v[0] == "fail")
    if nf:
        L.append("Failed natively, so not compared (timing tests fail natively when the machine is loaded; "
                 "test_compileall's hard-link dedup as root): " + ", ".join(f"`{k}`" for k in nf) + "\n")
    if diffs:
        L.append("## Differences (passed natively)\n")
        L.append("| case | moat | message | exclusion |")
        L.append("|---|---|---|---|")
        for k, ns, ms, msg, ex in diffs:
            why = f"{ex[0]}: {ex[2]}" if ex else "**not excluded**"
            msg = msg.replace("|", "\\|")
            L.append(f"| `{k}` | {ms} | {msg} | {why.replace('|', '/')} |")
        L.append("")
    L.append("## Not run (exclusion list, sides both/moat)\n")
    for side, pat, why in excl:
        if side != "xfail":
            L.append(f"* `{pat}` ({side}): {why}")
    L.append("")
    return "\n".join(L)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--moat", default=os.environ.get("MOAT", os.path.join(ROOT, "build/cli/moat")))
    ap.add_argument("--jobs", "-j", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=900, help="per test module, seconds (regrtest --timeout)")
    ap.add_argument("--total-timeout", type=int, default=3600)
    ap.add_argument("--exclude", default=os.path.join(HERE, "python-exclude.txt"))
    ap.add_argument("--out", help="keep the logs and XML here (default: a temporary directory)")
    ap.add_argument("--report", help="write the markdown report here")
    ap.add_argument("--from", dest="reuse", metavar="DIR",
                    help="compare and report the results an earlier --out DIR kept (no run)")
    ap.add_argument("--quick", action="store_true", help=f"a small fast subset: {' '.join(QUICK)}")
    ap.add_argument("modules", nargs="*")
    args = ap.parse_args()
    if not os.path.exists("/usr/lib/python3.11/test/test_os.py"):
        print("skip python-suite: Debian's libpython3.11-testsuite is not installed")
        return 77
    if not os.access(args.moat, os.X_OK):
        print(f"python-suite: no moat binary at {args.moat}", file=sys.stderr)
        return 2
    modules = args.modules or (QUICK if args.quick else MODULES)
    excl = load_exclusions(args.exclude)
    if args.reuse:
        out = args.out = args.reuse
        nat, moat = load_side("native", out), load_side("moat", out)
    else:
        out = args.out or tempfile.mkdtemp(prefix="moat-pysuite.")
        os.makedirs(out, exist_ok=True)
        os.chmod(out, 0o777)  # the guest's root is mapped to a host uid of its own
        nat = run_side("native", args, out, modules, excl)
        moat = run_side("moat", args, out, modules, excl)
    diffs = compare(nat, moat, modules, excl)
    for mod in modules:
        a, b = counts(nat["cases"], mod), counts(moat["cases"], mod)
        print(f"{mod:18} native {a['pass']:4}/{a['fail']}/{a['skip']:<3} "
              f"moat {b['pass']:4}/{b['fail']}/{b['skip']:<3}  {moat['modules'].get(mod, '?')}")
    for k, ns, ms, msg, ex in diffs:
        tag = f"excluded ({ex[0]})" if ex else "DIFF"
        print(f"{tag}: {k}: native {ns}, moat {ms}: {msg}")
    open_ = [d for d in diffs if not d[4]]
    print(f"# python-suite: {len(modules)} modules, native {nat['secs']:.0f}s, moat {moat['secs']:.0f}s; "
          f"{len(diffs)} differences, {len(open_)} not excluded"
          + (f" (logs: {out})" if args.out or open_ else ""))
    if args.report:
        with open(args.report, "w") as f:
            f.write(report_md(args, nat, moat, modules, excl, diffs))
    if not args.out:
        if not open_:
            shutil.rmtree(out, ignore_errors=True)
    return 1 if open_ else 0


if __name__ == "__main__":
    sys.exit(main())

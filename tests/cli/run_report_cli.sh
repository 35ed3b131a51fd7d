#!/usr/bin/env bash
# ctest: `passcheck report DIR` — usage errors (exit 2), an unreadable folder or a malformed case.txt (exit 3,
# naming the file and line), and a real failure folder (a planted fault's suite run) rendered as one HTML page:
# parsed here, one summary row and one section per repro folder, each with its replay command and its pictures
# embedded as SVG data: URIs; the page is written atomically (no temporary file left).
# usage: run_report_cli.sh PASSCHECK
set -uo pipefail
pc=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$tmp" || exit 1

expect 0 "usage: passcheck report DIR" -- "$pc" report --help
expect 2 "missing DIR" -- "$pc" report
expect 2 "unknown option '--bogus'" -- "$pc" report . --bogus
expect 2 "empty --out" -- "$pc" report . --out ''
expect 3 "cannot read DIR '$tmp/none'" -- "$pc" report "$tmp/none"

# a failure folder with repros: a planted fault, three of them at most
"$pc" suite --cases 40 --seed 7 --no-shrink --quiet --out fails --inject level2-forgets-ep --family float \
    --property ep-assignment >/dev/null 2>&1
n=$(ls -d fails/*/ 2>/dev/null | wc -l)
check "the suite wrote repro folders ($n)" test "$n" -gt 0
expect 0 "report: $n repros? -> fails/report.html" -- "$pc" report fails
check "the page parses: one row and one section per repro, replay commands, embedded pictures" python3 - \
    fails/report.html "$n" <<'PY'
import base64, html.parser, sys
path, n = sys.argv[1], int(sys.argv[2])
class P(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.rows = self.sections = 0
        self.svgs = []
        self.pre = None
        self.replays = []
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "tr" and a.get("class") == "repro": self.rows += 1
        if tag == "section": self.sections += 1
        if tag == "img" and a.get("src", "").startswith("data:image/svg+xml;base64,"):
            self.svgs.append(base64.b64decode(a["src"].split(",", 1)[1]))
        if tag == "pre": self.pre = a.get("class")
    def handle_data(self, data):
        if self.pre == "replay": self.replays.append(data)
    def handle_endtag(self, tag):
        if tag == "pre": self.pre = None
p = P()
p.feed(open(path, encoding="utf-8").read())
assert p.rows == n and p.sections == n, (p.rows, p.sections, n)
assert len(p.replays) == n and all(r.startswith("passcheck suite --replay fails/") for r in p.replays), p.replays
assert len(p.svgs) >= n and all(b"<svg" in s for s in p.svgs), len(p.svgs)  # a before/after pair, or the repro
assert "ep-assignment@" in open(path, encoding="utf-8").read()
PY
check "no temporary file left beside the page" bash -c "test \$(ls -a fails | grep -c '^\\.report') -eq 0"

# a folder with no repros still gets a page (0 repros); a malformed case.txt is a bad input naming it
mkdir -p empty
expect 0 "report: 0 repros -> empty/report.html" -- "$pc" report empty
mkdir -p bad/x
printf 'no equals sign\n' >bad/x/case.txt
expect 3 "bad/x/case.txt" -- "$pc" report bad
check "nothing written for a bad folder" test ! -e bad/report.html
expect 3 "cannot write --out file $tmp/no/dir/r.html" -- "$pc" report empty --out "$tmp/no/dir/r.html"
finish "report CLI"

#!/usr/bin/env bash
# Start a new detector (like clippy's `cargo dev new_lint`): writes its file, its docs, its
# fixtures' rows and expectations (expect.toml) and its lab manifest, and registers it (the
# detectors! list and the code list of docs/detectors.md). What it writes says TODO wherever only
# you can say it; the test suite fails until every TODO is gone, the fixtures are cut and the lab
# has a recorded trace where the detector fires and one where it stays quiet (docs/detectors.md:
# what each piece must hold).
#
#   scripts/new-detector.sh NAME CODE      e.g. scripts/new-detector.sh pipe-churn SL024
#   scripts/new-detector.sh --dry-run NAME CODE   print what it would write, change nothing
set -euo pipefail
cd "$(dirname "$0")/.."

dry=0
if [ "${1:-}" = --dry-run ]; then dry=1; shift; fi
if [ $# -ne 2 ]; then
    sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
fi
name=$1 code=$2
if ! [[ $name =~ ^[a-z]+(-[a-z]+)*$ ]]; then
    echo "new-detector: NAME is kebab-case letters (busy-poll, pipe-churn), not '$name'" >&2; exit 2
fi
if ! [[ $code =~ ^SL[0-9]{3}$ ]]; then
    echo "new-detector: CODE is SL and three digits (SL024), not '$code'" >&2; exit 2
fi
module=${name//-/_}
type=$(echo "$name" | sed -E 's/(^|-)([a-z])/\U\2/g')
dir=crates/analyze/src/detectors
fixtures=crates/analyze/fixtures/$name
if grep -qE "^\s+$module,$" $dir/mod.rs || [ -e "$dir/$module.rs" ] || [ -e "lab/$name" ] || [ -e "$fixtures" ]; then
    echo "new-detector: $name exists already ($dir/$module.rs, lab/$name, $fixtures or the detectors! list)" >&2; exit 1
fi
# a code is declared in the title line of the detector's docs: `# busy-poll (SL001): ...`
if grep -qs "^# [a-z-]* ($code): " $dir/*.md; then
    echo "new-detector: code $code is taken: $(grep -ls "^# [a-z-]* ($code): " $dir/*.md)" >&2; exit 1
fi

write() { # PATH: stdin to PATH (or to stdout with --dry-run)
    if [ $dry = 1 ]; then echo "==> $1"; cat; echo; else mkdir -p "$(dirname "$1")"; cat > "$1"; echo "wrote $1"; fi
}

write "$dir/$module.rs" <<EOF
//! \`$name\` ($code): TODO one line on the pathology.
//!
//! TODO how the detector tells it from ordinary behaviour (what it follows per thread, what makes
//! a finding), in a few lines.

use crate::host::{Best, Groups, Hosted, Merge, State};
use crate::kit::{EvidenceBuf, Metrics, Span, Timing};
use crate::registry::{Ctx, FinishCtx};
use syslint_event::{Event, Syscall};
use syslint_report::{Finding, Severity};

// META, Config and OPTIONS from the title and the Declaration block of $module.md, and the
// detector's struct, holding its config (a detector that keeps more than the analyzer keeps for
// it names its constructor instead: \`$type { cfg, more: Vec::new() }\`, and declares the struct)
crate::detector!("$module", struct $type);

/// What the detector follows in one thread.
#[derive(Clone, Default)]
pub struct Thread {
    calls: u64,
    timing: Timing,
    span: Span,
    evidence: EvidenceBuf,
}

/// What a program's threads add up to.
#[derive(Clone, Default)]
pub struct Program {
    calls: u64,
    threads: u64,
    timing: Timing,
    span: Span,
    evidence: Best<EvidenceBuf>,
}

crate::merge!(Program { calls: sum, threads: sum, timing: merge, span: merge, evidence: merge });

impl Hosted for $type {
    type Thread = Thread;
    type Program = Program;
    type Object = ();

    fn on_syscall(&mut self, s: &mut State<'_, Self>, _cx: &Ctx, ev: &Event, sc: &Syscall) {
        let Some(th) = s.thread_or(|| Thread { evidence: EvidenceBuf::new(4), ..Thread::default() }) else { return };
        th.calls += 1;
        th.timing.add(sc.dur_ns);
        th.span.add(ev.ts_ns);
        th.evidence.push(ev);
    }

    fn end_thread(&mut self, s: &mut State<'_, Self>) {
        let Some(th) = s.existing().map(std::mem::take) else { return };
        if th.calls == 0 {
            return;
        }
        let evidence = Best::new(th.calls, th.evidence);
        s.program().merge(Program { calls: th.calls, threads: 1, timing: th.timing, span: th.span, evidence });
    }

    fn report(&mut self, groups: Groups<'_, Program>, cx: &FinishCtx) -> Vec<Finding> {
        groups.findings(cx.model, |p| {
            if p.calls < self.cfg.min_calls.max(1) {
                return None;
            }
            let mut m = Metrics::new();
            m.count("calls", p.calls);
            m.count("threads", p.threads);
            m.value_opt("seconds", p.timing.seconds());
            let message = format!("TODO {} calls", p.calls);
            Some(
                META.finding(Severity::Info, message)
                    .over(&p.span)
                    .metrics(m)
                    .evidence(&p.evidence, cx.clock)
                    .cost(format!("TODO what {} calls cost", p.calls)),
            )
        })
    }
}

// The fixture tests are data: fixtures/$name/expect.toml, run by src/check/fixtures.rs.
EOF

write "$fixtures/expect.toml" <<EOF
# What $name reports on each input, one [[case]] per run: checked by
# src/check/fixtures.rs (the format is described there); the fixtures' origins are in ../README.md.

# TODO what the fixture holds (cut from a lab trace where the detector fires), and why its
# numbers are what they are
[[case]]
name = "fires_on_TODO"
file = "TODO-fires.strace"
snapshot = true
findings = 1
[[case.finding]]
severity = "info"
[case.finding.metrics]
# TODO the key metrics, each with why it is that number
calls = 0

# TODO the near miss (a GOOD variant of the lab) and why it is quiet
[[case]]
name = "TODO_is_quiet"
file = "TODO-near.strace"
findings = 0
EOF

write "$dir/$module.md" <<EOF
# $name ($code): TODO what it finds, in the words of the finding

## What

TODO what the detector finds and how it tells it from ordinary behaviour (its thresholds by option name).

## Why

TODO why it hurts, with what the lab measured natively (the fix's saving, back to back).

## Evidence

TODO every metric key of the finding, and which lines are kept as evidence.

## Fix

TODO the fix every finding carries, in one paragraph without a final period

TODO the longer explanation \`syslint explain\` prints, per runtime where it differs.

## Example

TODO real strace lines from a recorded lab trace, with the trace's path:
    TODO

## Declaration

\`\`\`toml
category = "Cpu"  # Cpu, Network, Filesystem or Io
# off by default until it is proven on real programs other than its lab's
status = "Preview"

[cost]
metric = "seconds"
model = "TODO the time a fix saves"

# TODO the syscalls it needs (a detector is never called for others)
[interest]
syscalls = ["Getppid"]

# what an excerpt and a table of counts can show, once it has rules for them (on_excerpt,
# on_counts), in words for syslint explain; left out: it reads full traces only
# [levels]
# excerpt = "..."
# counts = "..."
# table = ["every-syscall", "errors"]   # what a table needs for on_counts to be asked

[[option]]
name = "min_calls"
default = 1000
meaning = "calls a program needs to be reported"

# a severity threshold the trace adds up (calls, bytes, seconds): \`amount = true\` lets a
# window cut short by the agent's bound of records judge it at the rate it saw
# [[option]]
# name = "warn_calls"
# default = 100000
# meaning = "calls for a warning"
# amount = true
\`\`\`
EOF

write "lab/$name/manifest.toml" <<EOF
# lab/$name: what each recorded trace in traces/ shows for $name judged alone
# (\`syslint analyze --select $name\`), and why the quiet ones are quiet.
# Walked in-process by crates/cli/tests/labs.rs; a trace recorded again or added must be judged here.
detector = "$name"
live = "lab/$name/run.sh"

# TODO the BAD variant (traces/TODO-bad.<flags>.strace[.gz], recorded by record.sh)
[[variant]]
name = "TODO-bad"
expect = "warning"

# TODO the GOOD variant: the same program with the fix
[[variant]]
name = "TODO-good"
expect = "quiet"
reason = "TODO why it is quiet"

# What people paste instead of a full trace (crates/cli/tests/pasted_labs.rs): tables of counts
# (lab/counts/record.sh) and excerpts (lab/excerpts/cut.py) of the BAD and the GOOD run.
[pasted]
bad = "TODO-bad"
good = "TODO-good"

# BAD inputs the detector does not name, each with why (a table without the times, ...)
[pasted.quiet]

# eBPF against strace (crates/cli/tests/ebpf_labs.rs): BAD traced live with eBPF gives the strace
# recording's finding, with metrics of the same order; GOOD stays quiet.
[[ebpf]]
bad = "TODO-bad"
good = "TODO-good"
EOF

if [ $dry = 0 ]; then
    # the registry line, in the detectors! list, after the last detector
    python3 - "$dir/mod.rs" "$module" <<'PY'
import re, sys
path, module = sys.argv[1], sys.argv[2]
s = open(path).read()
start = s.index("detectors! {\n")
end = s.index("\n}\n", start)
s = s[:end] + f"\n    {module}," + s[end:]
open(path, "w").write(s)
PY
    # the code list of docs/detectors.md
    python3 - docs/detectors.md "$code" "$name" <<'PY'
import sys
path, code, name = sys.argv[1:]
s = open(path).read()
i = s.index("\nCodes: ")
j = s.index("\n\n", i + 1)
para = s[i:j].rstrip(".")
s = s[:i] + para + f", {code} {name}." + s[j:]
open(path, "w").write(s)
PY
    # the fixtures' origins
    [ -z "$(tail -c1 crates/analyze/fixtures/README.md)" ] || echo >> crates/analyze/fixtures/README.md
    printf '| %s/TODO-fires.strace | TODO lines of lab/%s/traces/TODO | TODO: fires |\n| %s/TODO-near.strace | TODO | TODO: quiet |\n' \
        "$name" "$name" "$name" >> crates/analyze/fixtures/README.md
    echo "registered $module in $dir/mod.rs and $code in docs/detectors.md; fixture rows in crates/analyze/fixtures/README.md"
    echo "next: write the TODOs, lab/$name/ (a BAD program, a GOOD one, run.sh, record.sh, README), record its traces, cut fixtures into $fixtures/ and say in its expect.toml what the detector reports on them; then ./scripts/test.sh"
fi

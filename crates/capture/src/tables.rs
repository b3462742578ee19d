//! Tables of counts per syscall that people paste instead of a trace: `strace -c`/`-C`/`-w`
//! (any strace 4.x to 6.x, `-U` column selections, rows without their header, decimal commas),
//! `perf trace -s`/`--summary` (a table per thread), libbpf-tools' and BCC's `syscount`
//! (plain, `-L`, `-P`, `-x`, `-e`), and syslint's own `--summary-only` table. Each is found
//! wherever it is in the text: a shell prompt and the command line above it, program output
//! around it. The command line, when there, says how long the counting ran
//! (`timeout 5s strace -c ...`, `sleep 60; pkill strace`, `syscount -d 10`).
//!
//! [`read`] never panics on any input (the `tables` fuzz body checks it).

use syslint_report::{CountRow, Counts, TaskCounts};

/// The most text [`read`] looks at (a pasted table is a few KiB; a longer input is a trace).
pub const MAX_TEXT: usize = 1 << 20;

/// The table of counts in `text`, if there is one, with the command line and duration the
/// text gives. `None` when no table row was found.
pub fn read(text: &str) -> Option<Counts> {
    let text = cut(text, MAX_TEXT);
    let lines: Vec<&str> = text.lines().map(|l| l.strip_suffix('\r').unwrap_or(l)).collect();
    let command = command_line(&lines);
    // each reader says how many lines were the table's (headers, rules, rows, interval stamps)
    // syslint's own report first: its table's header (`syscall calls errors ... total`) would
    // pass for perf's
    let (mut counts, used) = if let Some(c) = syslint_summary(&lines) {
        // syslint's own report: every line of it is syslint's
        let n = lines.len();
        (c, n)
    } else if let Some(c) = perf(&lines) {
        c
    } else if let Some(c) = syscount(&lines) {
        c
    } else {
        strace(&lines, command.as_deref())?
    };
    // the rest of the paste (a prompt, program output, strace's own messages): read past,
    // nothing of the table lost, but said
    let text_lines = lines.iter().filter(|l| !l.trim().is_empty()).count();
    counts.around_lines = text_lines.saturating_sub(used + usize::from(command.is_some())) as u64;
    if counts.rows.is_empty() && counts.per_task.is_empty() {
        return None;
    }
    if let Some(cmd) = &command {
        counts.duration_s = counts.duration_s.or_else(|| duration_of(cmd));
        if counts.tool == "syscount" || counts.tool.starts_with("syscount ") {
            counts.tool = syscount_tool(cmd, &counts.tool);
            if flag(cmd, "-x") || flag(cmd, "--failures") || cmd.contains(" -e") || cmd.contains("--errno") {
                // every count is of failed calls
                for r in &mut counts.rows {
                    r.errors = r.calls;
                }
                counts.errors_known = true;
            }
        } else if counts.tool == "strace -c" && (flag(cmd, "-w") || cmd.contains("--summary-wall-clock")) {
            counts.tool = "strace -c -w".into();
        }
    }
    counts.only = limited_to(&lines, counts.command.as_deref().or(command.as_deref()), &counts.tool);
    counts.command = command;
    counts.rows.sort_by(|a, b| b.calls.cmp(&a.calls).then(a.name.cmp(&b.name)));
    Some(counts)
}

/// `text` cut to at most `max` bytes, on a character boundary.
fn cut(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Whether `cmd` has the option `f` as a word of its own (`-w`, not `-wx`).
fn flag(cmd: &str, f: &str) -> bool {
    cmd.split_whitespace().any(|w| w == f)
}

/// The line that ran the counting tool: after a shell prompt, or the paste's first line that
/// names the tool with its summary option.
fn command_line(lines: &[&str]) -> Option<String> {
    for l in lines.iter().take(4000) {
        let t = strip_prompt(l.trim());
        let words: Vec<&str> = t.split_whitespace().collect();
        let has = |w: &str| words.iter().any(|x| *x == w || x.ends_with(&format!("/{w}")));
        let strace_c = has("strace")
            && words.iter().any(|w| {
                (w.starts_with('-') && !w.starts_with("--") && (w.contains('c') || w.contains('C')) && w.len() <= 6)
                    || w.starts_with("--summary")
            });
        let perf_s = has("perf")
            && words.contains(&"trace")
            && words.iter().any(|w| {
                *w == "--summary"
                    || *w == "--with-summary"
                    // `-s`, `-S`, or in a cluster of short flags (`-as`)
                    || (w.starts_with('-')
                        && !w.starts_with("--")
                        && w.len() <= 6
                        && w[1..].chars().all(|c| c.is_ascii_alphabetic())
                        && (w.contains('s') || w.contains('S')))
            });
        let tool = strace_c
            || perf_s
            || has("syscount")
            || has("syscount-bpfcc")
            || (has("syslint") && words.contains(&"--summary-only"));
        if tool && words.len() < 60 {
            return Some(t.to_string());
        }
    }
    None
}

/// The syscalls the counting was limited to: syscount's own `Tracing syscall 'fsync'...`
/// header or `--syscall`, strace's `-e trace=...` (`-e open,read`, `--trace=`, `-etrace=`),
/// perf trace's `-e`/`--event`. Empty when the paste does not say the counting was limited.
fn limited_to(lines: &[&str], cmd: Option<&str>, tool: &str) -> Vec<String> {
    let list = |v: &str| -> Vec<String> {
        v.trim_matches(|c| c == '\'' || c == '"')
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect()
    };
    if tool.starts_with("syscount") {
        for l in lines {
            if let Some(rest) = l.trim().strip_prefix("Tracing syscall '") {
                if let Some(name) = rest.split('\'').next().filter(|n| is_name(n)) {
                    return vec![name.to_string()];
                }
            }
        }
    }
    let Some(cmd) = cmd else { return Vec::new() };
    let words: Vec<&str> = cmd.split_whitespace().collect();
    for (i, w) in words.iter().enumerate() {
        let next = words.get(i + 1).copied().unwrap_or("");
        let value = match *w {
            "--syscall" if tool.starts_with("syscount") => next,
            "-e" | "--event" if tool.starts_with("perf") => next,
            "-e" if tool.starts_with("strace") => next,
            _ => {
                if let Some(v) = w.strip_prefix("--syscall=").filter(|_| tool.starts_with("syscount")) {
                    v
                } else if let Some(v) = w.strip_prefix("--event=").filter(|_| tool.starts_with("perf")) {
                    v
                } else if let Some(v) = w.strip_prefix("--trace=").filter(|_| tool.starts_with("strace")) {
                    v
                } else if let Some(v) = w.strip_prefix("-e").filter(|v| !v.is_empty() && tool.starts_with("strace")) {
                    v
                } else {
                    continue;
                }
            }
        };
        let value = value.trim_matches(|c| c == '\'' || c == '"');
        let value = if tool.starts_with("strace") {
            // `-e trace=open,read` or `-e open,read`; other qualifiers (`-e signal=`, `-e
            // read=3`, `-e status=failed`) do not choose syscalls
            match value.split_once('=') {
                Some(("trace" | "t", v)) => v,
                Some(_) => continue,
                None => value,
            }
        } else {
            value
        };
        let v = list(value);
        if !v.is_empty() {
            return v;
        }
    }
    Vec::new()
}

/// A line without its shell prompt (`$ `, `# `, `user@host:~$ `, `[root@h ~]# `).
fn strip_prompt(l: &str) -> &str {
    for p in ["$ ", "# ", "% ", "> "] {
        if let Some(i) = l.find(p) {
            // a prompt ends at its first `$ ` / `# `, with no space inside the prompt before it
            if i == 0 || (i < 80 && !l[..i].contains(' ')) || l[..i].ends_with(']') || l[..i].ends_with('~') {
                return l[i + p.len()..].trim_start();
            }
        }
    }
    l
}

/// Seconds the command line says the counting ran: `timeout 5s`, `timeout 60`, `sleep 60`,
/// `-d 10` (syscount), `--duration 10`, `--for 30s` (syslint), `perf trace -s ... sleep 10`.
pub fn duration_of(cmd: &str) -> Option<f64> {
    let words: Vec<&str> =
        cmd.split(|c: char| c.is_whitespace() || c == ';' || c == '&').filter(|w| !w.is_empty()).collect();
    for (i, w) in words.iter().enumerate() {
        let next = words.get(i + 1).copied();
        match *w {
            "timeout" => {
                // skip timeout's own options (`-s KILL`, `-k 5`, `--signal=INT`)
                let mut j = i + 1;
                while let Some(o) = words.get(j) {
                    if *o == "-s" || *o == "-k" || *o == "--signal" || *o == "--kill-after" {
                        j += 2;
                    } else if o.starts_with('-') {
                        j += 1;
                    } else {
                        break;
                    }
                }
                if let Some(d) = words.get(j).and_then(|d| seconds(d)) {
                    return Some(d);
                }
            }
            "sleep" | "-d" | "--duration" | "--for" => {
                if let Some(d) = next.and_then(seconds) {
                    return Some(d);
                }
            }
            _ => {
                for p in ["--duration=", "--for="] {
                    if let Some(d) = w.strip_prefix(p).and_then(seconds) {
                        return Some(d);
                    }
                }
            }
        }
    }
    None
}

/// `5`, `5s`, `1.5m`, `500ms`, `2h` in seconds.
fn seconds(s: &str) -> Option<f64> {
    let s = s.trim();
    let (num, mult) = if let Some(n) = s.strip_suffix("ms") {
        (n, 0.001)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix('m') {
        (n, 60.0)
    } else if let Some(n) = s.strip_suffix('h') {
        (n, 3600.0)
    } else {
        (s, 1.0)
    };
    let v: f64 = num.parse().ok()?;
    (v.is_finite() && v > 0.0 && v < 1e7).then_some(v * mult)
}

/// A number in a table cell: `0.000274`, `0,000274` (a decimal comma), `12`.
fn num(s: &str) -> Option<f64> {
    let s = s.trim_end_matches('%');
    if s.is_empty() || !s.bytes().all(|c| c.is_ascii_digit() || c == b'.' || c == b',') {
        return None;
    }
    let v: f64 = if s.contains(',') && !s.contains('.') && s.matches(',').count() == 1 {
        s.replace(',', ".").parse().ok()?
    } else {
        s.parse().ok()?
    };
    v.is_finite().then_some(v)
}

/// A syscall name as the tables print it (`newfstatat`, `_llseek`, `syscall_0x1b6`, `?`).
fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 40
        && s.bytes().next().is_some_and(|c| c.is_ascii_alphabetic() || c == b'_' || c == b'?')
        && s.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'?')
}

fn add(rows: &mut Vec<CountRow>, name: &str, calls: u64, errors: u64, seconds: Option<f64>) {
    match rows.iter_mut().find(|r| r.name == name) {
        Some(r) => {
            r.calls = r.calls.saturating_add(calls);
            r.errors = r.errors.saturating_add(errors);
            r.seconds = match (r.seconds, seconds) {
                (Some(a), Some(b)) => Some(a + b),
                (a, b) => a.or(b),
            };
        }
        None => rows.push(CountRow { name: name.to_string(), calls, errors, seconds }),
    }
}

/// Rows are capped: a table has a few hundred syscalls at most.
const MAX_ROWS: usize = 4096;

// ---------------------------------------------------------------------------------------------
// strace -c

/// A column of strace's table.
#[derive(Copy, Clone, PartialEq, Debug)]
enum Col {
    Percent,
    Seconds,
    /// strace 7.1's `wall-total` (`-U`): the calls' wall-clock time, waits included.
    WallSeconds,
    Avg,
    Calls,
    Errors,
    Name,
    Other,
}

fn col_of(label: &str) -> Col {
    match label.trim() {
        "% time" | "%time" | "time" => Col::Percent,
        "seconds" | "total" => Col::Seconds,
        "wall-total" => Col::WallSeconds,
        "usecs/call" | "avg" => Col::Avg,
        "calls" => Col::Calls,
        "errors" => Col::Errors,
        "syscall" => Col::Name,
        _ => Col::Other,
    }
}

/// strace's default columns (every version): `% time seconds usecs/call calls errors syscall`.
const DEFAULT_COLS: [Col; 6] = [Col::Percent, Col::Seconds, Col::Avg, Col::Calls, Col::Errors, Col::Name];

/// The spans (start, end) of the `------ ----------- ...` rule under a header.
fn rule_spans(l: &str) -> Option<Vec<(usize, usize)>> {
    let t = l.trim_end();
    if t.len() < 10 || !t.bytes().all(|c| c == b'-' || c == b' ') || !t.trim_start().starts_with("---") {
        return None;
    }
    let mut spans = Vec::new();
    let b = t.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'-' {
            let s = i;
            while i < b.len() && b[i] == b'-' {
                i += 1;
            }
            spans.push((s, i));
        } else {
            i += 1;
        }
    }
    (spans.len() >= 2).then_some(spans)
}

/// The columns of a strace header line (`% time     seconds  usecs/call ...`, or the `-U`
/// selections: `    calls    errors syscall   seconds ...`).
fn strace_header(l: &str) -> Option<Vec<Col>> {
    // a table pasted as inline code starts with a backtick (matomo#14420)
    let t = l.trim().trim_start_matches('`').replace("% time", "%time");
    let words: Vec<&str> = t.split_whitespace().collect();
    let known = |w: &str| {
        col_of(w) != Col::Other
            || matches!(w, "longest" | "shortest" | "max" | "min" | "wall-min" | "wall-max" | "wall-avg")
    };
    if words.len() < 2 || !words.iter().all(|w| known(w)) {
        return None;
    }
    let cols: Vec<Col> = words.iter().map(|w| col_of(w)).collect();
    (cols.contains(&Col::Name)
        && (cols.contains(&Col::Calls) || cols.contains(&Col::Seconds) || cols.contains(&Col::WallSeconds)))
    .then_some(cols)
}

/// One row of a strace table in the given columns; `spans`, when the rule line was seen, place
/// the cells (a blank `errors` cell is a column without a token). `None`: not a row.
fn strace_row(l: &str, cols: &[Col], spans: Option<&[(usize, usize)]>) -> Option<(String, u64, u64, Option<f64>)> {
    let toks: Vec<(usize, &str)> = tokens(l);
    let name_at = toks.iter().position(|(_, t)| num(t).is_none())?;
    if toks.iter().skip(name_at + 1).any(|(_, t)| num(t).is_none()) {
        return None;
    }
    let name = toks[name_at].1;
    if !is_name(name) {
        return None;
    }
    let name_col = cols.iter().position(|c| *c == Col::Name)?;
    // numbers before the name go to the columns before the name column, after to those after
    let before: Vec<Col> = cols[..name_col].to_vec();
    let after: Vec<Col> = cols[name_col + 1..].to_vec();
    let nb = &toks[..name_at];
    let na = &toks[name_at + 1..];
    if nb.len() > before.len() || na.len() > after.len() {
        return None;
    }
    let mut vals: Vec<(Col, f64)> = Vec::new();
    let place = |toks: &[(usize, &str)], cols: &[Col], offset: usize, vals: &mut Vec<(Col, f64)>| -> Option<()> {
        if toks.len() == cols.len() {
            for ((_, t), c) in toks.iter().zip(cols) {
                vals.push((*c, num(t)?));
            }
            return Some(());
        }
        // fewer tokens than columns: blank cells. With the rule's spans, each number belongs to
        // the column whose right edge is nearest its own; without, the blank one is `errors`
        // (strace leaves it empty when 0), else the last ones are missing.
        match spans {
            Some(sp) if sp.len() >= offset + cols.len() => {
                let sp = &sp[offset..offset + cols.len()];
                let mut used = vec![false; cols.len()];
                for (pos, t) in toks {
                    let end = pos + t.len();
                    let best =
                        (0..cols.len()).filter(|&i| !used[i]).min_by_key(|&i| (sp[i].1 as i64 - end as i64).abs())?;
                    used[best] = true;
                    vals.push((cols[best], num(t)?));
                }
                Some(())
            }
            _ => {
                let without: Vec<Col> = cols.iter().copied().filter(|c| *c != Col::Errors).collect();
                let cs = if toks.len() == without.len() { without } else { cols[..toks.len()].to_vec() };
                for ((_, t), c) in toks.iter().zip(&cs) {
                    vals.push((*c, num(t)?));
                }
                Some(())
            }
        }
    };
    place(nb, &before, 0, &mut vals)?;
    place(na, &after, name_col + 1, &mut vals)?;
    let get = |c: Col| vals.iter().find(|(x, _)| *x == c).map(|(_, v)| *v);
    let calls = get(Col::Calls)?;
    if calls.fract() != 0.0 || calls < 0.0 {
        return None;
    }
    let errors = get(Col::Errors).unwrap_or(0.0);
    if errors.fract() != 0.0 {
        return None;
    }
    // the system time when the table has it; else strace 7.1's wall-clock total (the table
    // then says which it is: `strace()`)
    Some((name.to_string(), calls as u64, errors as u64, get(Col::Seconds).or_else(|| get(Col::WallSeconds))))
}

/// Whitespace-separated tokens with their byte offsets.
fn tokens(l: &str) -> Vec<(usize, &str)> {
    let mut v = Vec::new();
    let mut start = None;
    for (i, c) in l.char_indices() {
        if c.is_whitespace() {
            if let Some(s) = start.take() {
                v.push((s, &l[s..i]));
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        v.push((s, &l[s..]));
    }
    v
}

/// strace's `-c` table(s): with their header, or bare rows in the default columns. Several
/// tables (`strace -c -f` prints one; a paste may hold two runs) are summed.
fn strace(lines: &[&str], command: Option<&str>) -> Option<(Counts, usize)> {
    let mut used = 0usize;
    let mut rows = Vec::new();
    let mut cols: Option<Vec<Col>> = None;
    let mut spans: Option<Vec<(usize, usize)>> = None;
    let mut errors_col = false;
    // a table with wall-clock times only (`-U wall-total,...` without `total-time`)
    let mut wall_only = false;
    let mut seen_header = false;
    let mut bare = 0usize;
    for l in lines {
        // a table pasted as inline code ends with a backtick after its last row (matomo#14420)
        let l = &l.trim_end().trim_end_matches('`');
        if let Some(c) = strace_header(l) {
            used += 1;
            errors_col |= c.contains(&Col::Errors);
            wall_only |= c.contains(&Col::WallSeconds) && !c.contains(&Col::Seconds);
            cols = Some(c);
            spans = None;
            seen_header = true;
            continue;
        }
        if cols.is_some() && spans.is_none() {
            if let Some(sp) = rule_spans(l) {
                used += 1;
                spans = Some(sp);
                continue;
            }
        }
        if rule_spans(l).is_some() {
            used += 1;
            continue;
        }
        let c = cols.clone().unwrap_or_else(|| DEFAULT_COLS.to_vec());
        match strace_row(l, &c, spans.as_deref()) {
            Some((name, calls, errors, secs)) => {
                if name == "total" {
                    // the end of a table: the next rows belong to another (or are not rows)
                    used += 1;
                    cols = None;
                    spans = None;
                    continue;
                }
                if cols.is_none() {
                    // a bare row must look like strace's: a percentage and seconds with decimals
                    let t = tokens(l);
                    if t.len() < 5 || !(t[0].1.contains('.') || t[0].1.contains(',')) {
                        continue;
                    }
                    bare += 1;
                    errors_col = true;
                }
                used += 1;
                if rows.len() < MAX_ROWS {
                    add(&mut rows, &name, calls, errors, secs);
                }
            }
            None => {
                if !l.trim().is_empty() && cols.is_some() && !seen_row_like(l) {
                    // text after a table ends it
                    cols = None;
                    spans = None;
                }
            }
        }
    }
    if rows.is_empty() || (!seen_header && bare < 2 && command.is_none()) {
        return None;
    }
    let tool = if wall_only { "strace -c -w" } else { "strace -c" };
    Some((Counts { tool: tool.into(), rows, errors_known: errors_col, ..Default::default() }, used))
}

/// A line that might be a table row cut by the terminal (numbers only, or empty).
fn seen_row_like(l: &str) -> bool {
    l.split_whitespace().all(|t| num(t).is_some())
}

// ---------------------------------------------------------------------------------------------
// perf trace -s

/// `perf trace -s`/`--summary`: ` comm (pid), N events, P%` starts a thread's table; its
/// header is `syscall calls [errors] total min avg max stddev` (perf before 5.x has no
/// `errors`), a units line, a rule, then rows.
fn perf(lines: &[&str]) -> Option<(Counts, usize)> {
    let mut c = Counts { tool: "perf trace -s".into(), ..Default::default() };
    let mut used = 0usize;
    let mut task: Option<TaskCounts> = None;
    let mut cols: Option<Vec<String>> = None;
    let mut found = false;
    let finish = |task: &mut Option<TaskCounts>, c: &mut Counts| {
        if let Some(t) = task.take() {
            if !t.rows.is_empty() && c.per_task.len() < MAX_ROWS {
                c.per_task.push(t);
            }
        }
    };
    for l in lines {
        let t = l.trim();
        if t == "Summary of events:" || (t.starts_with("total, ") && t.ends_with(" events")) {
            used += 1;
            continue;
        }
        if let Some(head) = perf_task(t) {
            used += 1;
            finish(&mut task, &mut c);
            task = Some(TaskCounts { task: head, rows: Vec::new() });
            cols = None;
            continue;
        }
        let words: Vec<&str> = t.split_whitespace().collect();
        if words.first() == Some(&"syscall") && words.get(1) == Some(&"calls") && words.contains(&"total") {
            used += 1;
            cols = Some(words.iter().map(ToString::to_string).collect());
            found = true;
            if task.is_none() {
                task = Some(TaskCounts { task: String::new(), rows: Vec::new() });
            }
            continue;
        }
        let Some(cs) = &cols else { continue };
        if words.is_empty() || t.starts_with('(') || t.starts_with("---") {
            used += usize::from(!words.is_empty());
            continue;
        }
        if words.len() != cs.len() || !is_name(words[0]) {
            cols = None;
            continue;
        }
        let get = |name: &str| cs.iter().position(|x| x == name).and_then(|i| num(words[i]));
        let (Some(calls), Some(total)) = (get("calls"), get("total")) else {
            cols = None;
            continue;
        };
        let errors = get("errors");
        used += 1;
        c.errors_known |= errors.is_some();
        if let Some(tk) = task.as_mut() {
            if tk.rows.len() < MAX_ROWS {
                add(&mut tk.rows, words[0], calls as u64, errors.unwrap_or(0.0) as u64, Some(total / 1000.0));
            }
        }
    }
    finish(&mut task, &mut c);
    if !found {
        return None;
    }
    for t in &c.per_task {
        for r in &t.rows {
            add(&mut c.rows, &r.name, r.calls, r.errors, r.seconds);
        }
    }
    if c.per_task.len() == 1 && c.per_task[0].task.is_empty() {
        c.per_task.clear();
    }
    Some((c, used))
}

/// ` nginx (1234), 5012 events, 40.1%` -> `nginx (1234)`.
fn perf_task(t: &str) -> Option<String> {
    let (head, rest) = t.split_once("), ")?;
    let rest = rest.trim();
    if !(rest.ends_with('%') && rest.contains(" events") && head.contains(" (")) {
        return None;
    }
    Some(format!("{head})"))
}

// ---------------------------------------------------------------------------------------------
// syscount

/// libbpf-tools' and BCC's `syscount`: `SYSCALL COUNT [TIME (us)|TIME (ms)]`, or with `-P`
/// `PID COMM COUNT [TIME ...]`; one table per interval (`[12:34:56]`), summed. It prints the
/// top 10 by default (`-T N`), so rows beyond are not zero but unknown.
fn syscount(lines: &[&str]) -> Option<(Counts, usize)> {
    let mut c = Counts { tool: "syscount".into(), ..Default::default() };
    let mut used = 0usize;
    let mut mode: Option<(bool, Option<f64>)> = None; // (per process, time unit in seconds)
    let mut found = false;
    let mut latency = false;
    let mut per_process = false;
    for l in lines {
        let t = l.trim();
        // a syscall the tool has no name for, `[unknown: 436]`: one name cell (`syscall_436`,
        // the number as the traced machine's kernel numbers it)
        let unknown = t.strip_prefix("[unknown: ").and_then(|r| r.split_once(']'));
        let named;
        let mut words: Vec<&str> = t.split_whitespace().collect();
        if let Some((nr, rest)) = unknown.filter(|(nr, _)| !nr.is_empty() && nr.bytes().all(|b| b.is_ascii_digit())) {
            named = format!("syscall_{nr}");
            words = std::iter::once(named.as_str()).chain(rest.split_whitespace()).collect();
        }
        // its own lines: `Tracing syscalls, printing top 10... Ctrl+C to quit.`, the interval
        // stamps `[12:34:56]`, `Detaching...`
        if t.starts_with("Tracing ")
            || t.starts_with("Detaching")
            || (t.len() == 10 && t.starts_with('[') && t.ends_with(']'))
        {
            used += 1;
            continue;
        }
        match words.as_slice() {
            ["SYSCALL", "COUNT", rest @ ..] => {
                used += 1;
                let unit = time_unit(rest);
                latency |= unit.is_some();
                mode = Some((false, unit));
                found = true;
                continue;
            }
            ["PID", "COMM", "COUNT", rest @ ..] => {
                used += 1;
                let unit = time_unit(rest);
                latency |= unit.is_some();
                mode = Some((true, unit));
                per_process = true;
                found = true;
                continue;
            }
            _ => {}
        }
        let Some((proc_, unit)) = mode else { continue };
        let want = if proc_ { 3 } else { 2 } + usize::from(unit.is_some());
        if words.len() != want {
            mode = None;
            continue;
        }
        if proc_ {
            let (Some(_), Some(count)) = (words[0].parse::<u32>().ok(), num(words[2])) else {
                mode = None;
                continue;
            };
            let secs = unit.and_then(|u| num(words[3]).map(|v| v * u));
            used += 1;
            let name = format!("{} ({})", words[1], words[0]);
            match c.per_task.iter().position(|x| x.task == name) {
                Some(i) => add(&mut c.per_task[i].rows, "*", count as u64, 0, secs),
                None if c.per_task.len() < MAX_ROWS => {
                    let mut rows = Vec::new();
                    add(&mut rows, "*", count as u64, 0, secs);
                    c.per_task.push(TaskCounts { task: name, rows });
                }
                None => {}
            }
        } else {
            let (true, Some(count)) = (is_name(words[0]), num(words[1])) else {
                mode = None;
                continue;
            };
            if count.fract() != 0.0 {
                mode = None;
                continue;
            }
            let secs = unit.and_then(|u| num(words[2]).map(|v| v * u));
            used += 1;
            if c.rows.len() < MAX_ROWS {
                add(&mut c.rows, words[0], count as u64, 0, secs);
            }
        }
    }
    if !found {
        return None;
    }
    c.tool = match (latency, per_process) {
        (true, true) => "syscount -L -P",
        (true, false) => "syscount -L",
        (false, true) => "syscount -P",
        (false, false) => "syscount",
    }
    .into();
    Some((c, used))
}

fn time_unit(rest: &[&str]) -> Option<f64> {
    match rest {
        ["TIME", "(us)"] => Some(1e-6),
        ["TIME", "(ms)"] => Some(1e-3),
        _ => None,
    }
}

/// The tool's name with the options the command line gave that change what is counted.
fn syscount_tool(cmd: &str, found: &str) -> String {
    let mut t = found.to_string();
    if flag(cmd, "-x") || flag(cmd, "--failures") {
        t.push_str(" -x");
    }
    if let Some(e) = cmd.split_whitespace().skip_while(|w| *w != "-e" && *w != "--errno").nth(1) {
        t.push_str(&format!(" -e {e}"));
    }
    t
}

// ---------------------------------------------------------------------------------------------
// syslint --summary-only

/// syslint's own table report of `trace --summary-only`: a `syscalls` section whose header
/// is `syscall calls errors top errno total avg ...`, times with units (`490.0us`).
fn syslint_summary(lines: &[&str]) -> Option<Counts> {
    if !lines.iter().any(|l| l.contains("counted in the kernel")) {
        return None;
    }
    let mut c = Counts { tool: "syslint --summary-only".into(), errors_known: true, ..Default::default() };
    let mut inside = false;
    for l in lines {
        let words: Vec<&str> = l.split_whitespace().collect();
        if words.starts_with(&["syscall", "calls", "errors"]) {
            inside = true;
            continue;
        }
        if !inside {
            continue;
        }
        if words.len() < 3 || !is_name(words[0]) {
            inside = false;
            continue;
        }
        // the table report writes thousands with commas: `1,202`
        let count = |w: &str| w.replace(',', "").parse::<u64>().ok();
        let Some(calls) = count(words[1]) else {
            inside = false;
            continue;
        };
        let errors = words.get(2).and_then(|w| count(w)).unwrap_or(0);
        let total = words.iter().skip(2).find_map(|w| duration_with_unit(w));
        if c.rows.len() < MAX_ROWS {
            add(&mut c.rows, words[0], calls, errors, total);
        }
    }
    // `over 2.00 s` in the header line
    c.duration_s = lines.iter().find(|l| l.contains("counted in the kernel")).and_then(|l| {
        let w: Vec<&str> = l.split_whitespace().collect();
        let i = w.iter().position(|x| *x == "over")?;
        let v = num(w.get(i + 1)?)?;
        match w.get(i + 2).copied() {
            Some("ms") => Some(v / 1000.0),
            Some("min") => Some(v * 60.0),
            _ => Some(v),
        }
        .filter(|v| *v > 0.0)
    });
    (!c.rows.is_empty()).then_some(c)
}

/// `490.0us`, `1.2ms`, `3.00s`, `472ns` in seconds.
fn duration_with_unit(w: &str) -> Option<f64> {
    for (u, m) in [("ns", 1e-9), ("us", 1e-6), ("ms", 1e-3), ("s", 1.0)] {
        if let Some(n) = w.strip_suffix(u) {
            if let Some(v) = num(n) {
                return Some(v * m);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_from_command_lines() {
        assert_eq!(duration_of("timeout 5s strace -c -p 123"), Some(5.0));
        assert_eq!(duration_of("timeout -s INT 60 strace -c -f -p 1"), Some(60.0));
        assert_eq!(duration_of("strace -c -p 1 & sleep 60; pkill strace"), Some(60.0));
        assert_eq!(duration_of("syscount -d 10 -L"), Some(10.0));
        assert_eq!(duration_of("syslint trace --summary-only --for 30s -p 1"), Some(30.0));
        assert_eq!(duration_of("perf trace -s -p 1 -- sleep 2.5"), Some(2.5));
        assert_eq!(duration_of("strace -c ls"), None);
    }

    #[test]
    fn prompts_are_stripped() {
        assert_eq!(strip_prompt("$ strace -c ls"), "strace -c ls");
        assert_eq!(strip_prompt("root@web1:~# strace -c -p 1"), "strace -c -p 1");
        assert_eq!(strip_prompt("[root@web1 ~]# strace -c -p 1"), "strace -c -p 1");
        assert_eq!(strip_prompt("strace -c ls"), "strace -c ls");
    }

    #[test]
    fn numbers_with_decimal_commas() {
        assert_eq!(num("0,000274"), Some(0.000274));
        assert_eq!(num("48.41"), Some(48.41));
        assert_eq!(num("12"), Some(12.0));
        assert_eq!(num("total"), None);
    }
}

#[cfg(test)]
mod recorded {
    //! Real tables (tests/fixtures/tables/record.sh, lab/counts/record.sh): every row read, the
    //! blank `errors` cells in their place, checked against the table's own `total` row.
    use super::*;

    fn fixture(rel: &str) -> String {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(rel);
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }

    /// (calls, errors) of the `total` row, read independently of the parser: the numbers in
    /// the order of the header's `calls` and `errors` columns.
    fn total(text: &str) -> (u64, u64) {
        let header = text.lines().find(|l| l.contains("calls") && l.contains("syscall")).expect("header");
        let words: Vec<String> = header.replace("% time", "%time").split_whitespace().map(str::to_owned).collect();
        let t: Vec<&str> = text
            .lines()
            .find(|l| {
                l.split_whitespace().any(|w| w == "total") && l.trim_start().starts_with(|c: char| c.is_ascii_digit())
            })
            .expect("total row")
            .split_whitespace()
            .collect();
        let ci = words.iter().position(|w| w == "calls").expect("calls column");
        let ei = words.iter().position(|w| w == "errors").expect("errors column");
        let n = |i: usize| t.get(i).and_then(|x| x.parse().ok()).unwrap_or(0);
        (n(ci), n(ei))
    }

    /// strace 7.1's wall-clock columns: beside the system time, which stays the table's
    /// seconds (the wall-clock ones were read as calls and errors before: 13,172 "calls" of
    /// wait4); alone, they are its seconds and the table says its times are wall-clock ones.
    #[test]
    fn strace_7_wall_clock_columns() {
        let row = |c: &Counts, n: &str| c.rows.iter().find(|r| r.name == n).cloned().unwrap_or_else(|| panic!("{n}"));
        let both = read(&fixture("tests/fixtures/tables/ls.strace7-c-U-wall.txt")).expect("table");
        assert_eq!(both.tool, "strace -c");
        let close = row(&both, "close");
        assert_eq!((close.calls, close.errors, close.seconds), (2, 0, Some(0.0)));
        let alone = read(&fixture("tests/fixtures/tables/ls.strace7-c-U-wall-only.txt")).expect("table");
        assert_eq!(alone.tool, "strace -c -w");
        let close = row(&alone, "close");
        assert_eq!((close.calls, close.errors, close.seconds), (2, 0, Some(0.000027)));
        assert!(alone.errors_known && both.errors_known);
    }

    #[test]
    fn strace_tables_add_up_to_their_total_row() {
        for rel in [
            "tests/fixtures/tables/ls.strace-c-U.txt",
            "tests/fixtures/tables/ls.strace-C.txt",
            "tests/fixtures/tables/ls.strace7-c-U-wall.txt",
            "tests/fixtures/tables/ls.strace7-c-U-wall-only.txt",
            "lab/fd-close-sweep/counts/c-close.strace-c.txt",
            "lab/failed-lookup-storm/counts/c-search-bad.strace-cw.txt",
            "lab/accept-herd/counts/c-procs.strace-c.txt",
        ] {
            let text = fixture(rel);
            let c = read(&text).unwrap_or_else(|| panic!("{rel}: no table"));
            let (calls, errors) = total(&text);
            assert_eq!(c.total_calls(), calls, "{rel}");
            assert_eq!(c.rows.iter().map(|r| r.errors).sum::<u64>(), errors, "{rel}");
            assert!(c.errors_known, "{rel}");
        }
    }

    #[test]
    fn perf_and_syscount_tables_are_read_per_thread_and_summed() {
        let text = fixture("lab/accept-herd/counts/c-procs.perf.txt");
        let c = read(&text).expect("perf table");
        assert_eq!(c.tool, "perf trace -s");
        // the parent and four workers, each its own table
        assert_eq!(c.per_task.len(), 5, "{:?}", c.per_task.iter().map(|t| &t.task).collect::<Vec<_>>());
        let acc = c.row("accept4").expect("accept4");
        let per: u64 = c.per_task.iter().flat_map(|t| &t.rows).filter(|r| r.name == "accept4").map(|r| r.calls).sum();
        assert_eq!(acc.calls, per);
        let s = read(&fixture("lab/fd-close-sweep/counts/c-close.syscount.txt")).expect("syscount table");
        assert_eq!(s.tool, "syscount -L");
        assert!(!s.errors_known);
        assert!(s.row("close").is_some_and(|r| r.calls > 20_000 && r.seconds.is_some()));
    }

    #[test]
    fn garbage_is_no_table_and_no_panic() {
        for t in [
            "",
            "hello\nworld",
            "% time\n------ ---",
            "1 2 3 4 5 6\n",
            "\u{0}\u{ff}",
            "syscall calls total\nx 1 2",
            "SYSCALL COUNT\nread notanumber",
        ] {
            let _ = read(t);
        }
        assert!(read("just some program output\nwith numbers 1.0 2 3 4\n").is_none());
    }

    #[test]
    fn counting_limited_to_some_syscalls() {
        let only = |text: &str| read(text).map(|c| c.only).unwrap_or_default();
        // the BCC PR's own example (tests/fixtures/pasted/bcc-4132-syscount-fsync-mysqld.txt)
        assert_eq!(only(&fixture("tests/fixtures/pasted/bcc-4132-syscount-fsync-mysqld.txt")), ["fsync"]);
        let t = "% time     seconds  usecs/call     calls    errors syscall\n\
------ ----------- ----------- --------- --------- ----------------\n\
100.00    0.718114           1    363839           epoll_wait\n";
        assert_eq!(only(&format!("$ strace -c -e trace=epoll_wait,read -p 1\n{t}")), ["epoll_wait", "read"]);
        assert_eq!(only(&format!("$ strace -c -e epoll_wait -p 1\n{t}")), ["epoll_wait"]);
        assert_eq!(only(&format!("$ strace -c -etrace=%file -p 1\n{t}")), ["%file"]);
        assert!(only(&format!("$ strace -c -e signal=none -p 1\n{t}")).is_empty());
        assert!(only(&format!("$ timeout 5s strace -c -p 1\n{t}")).is_empty());
        let c = read(&format!("$ strace -c -e trace=epoll_wait -p 1\n{t}")).unwrap();
        assert!(c.counted("epoll_wait") && !c.counted("read") && !c.counted_any(&["read", "write"]));
    }

    #[test]
    fn lines_around_a_table_are_counted_not_lost() {
        let c = |rel: &str| read(&fixture(rel)).unwrap_or_else(|| panic!("{rel}: no table"));
        // prompts, `mpdscribble -V`, pgrep and a gdb backtrace around the table: 16 lines
        let m = c("tests/fixtures/pasted/mpdscribble-60-strace-c-epoll-spin.txt");
        assert_eq!((m.rows.len(), m.around_lines), (1, 16));
        // strace's attach line and ten `Process N detached` above it
        assert_eq!(c("tests/fixtures/pasted/nomad-8163-strace-c-sched-yield.txt").around_lines, 11);
        // a table in inline code: the backticks are the table's, all 7 rows read
        let t = c("tests/fixtures/pasted/matomo-14420-strace-c-after-fix-inline-code.txt");
        assert_eq!((t.rows.len(), t.around_lines), (7, 0));
        assert_eq!(t.row("rt_sigaction").map(|r| r.calls), Some(7528));
        // perf's `total, N events` header is the table's; the mail's trailing `...` is not
        assert_eq!(c("tests/fixtures/pasted/lkml-perf-trace-bpf-summary-total.txt").around_lines, 1);
        // syscount's `[unknown: 436]` row (close_range on that build) no longer ends the table
        let s = c("lab/fd-close-sweep/counts/c-range.syscount.txt");
        assert_eq!((s.rows.len(), s.around_lines), (24, 0));
        assert_eq!(s.row("syscall_436").map(|r| r.calls), Some(7));
    }
}

#[cfg(test)]
mod own_summary {
    /// syslint's own `trace --summary-only` table, read back (a paste of it): its thousands
    /// separators (`1,202`) once ended the rows.
    #[test]
    fn a_summary_only_table_reads_back() {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/tables/search-bad.syslint-summary-only.txt");
        let text = std::fs::read_to_string(&p).unwrap();
        let c = super::read(&text).expect("a table");
        assert_eq!(c.tool, "syslint --summary-only");
        let row = c.rows.iter().find(|r| r.name == "newfstatat").expect("newfstatat");
        assert_eq!((row.calls, row.errors), (1202, 1152));
        // the table shows its top 15 rows ("... 4 more syscalls"): those are read
        assert_eq!(c.rows.len(), 15);
        assert_eq!(c.rows.iter().map(|r| r.calls).sum::<u64>(), 1377);
    }
}

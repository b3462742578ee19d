//! What the detectors cost per event, and that detectors which ask for nothing cost nothing.
//!
//! Reads one strace log once into memory, then analyses it again and again with:
//! `none` (no detector: reader, model, summary), `all` (every stable detector), `all+16noop`
//! (plus 16 detectors whose interest is empty, as most detectors will be for most syscalls),
//! and `all+16every` (plus 16 that ask for every event and do nothing: what every detector cost
//! before dispatch by interest). Rounds are interleaved; medians are printed. With
//! `DISPATCH_EACH=1`, also each detector alone.
//!
//!   cargo run --release -p syslint-analyze --example dispatch -- LOG [ROUNDS]
//!
//! (bench/dispatch.sh runs it and prints the table for bench/RESULTS.md.)

#[path = "common/rounds.rs"]
mod rounds;

use std::sync::{atomic::AtomicU64, Arc};
use syslint_analyze::registry::{self, Ctx, Detector, Docs, FinishCtx, Interest, Meta, Status};
use syslint_analyze::Analyzer;
use syslint_event::{Event, Syscall};
use syslint_report::{Capture, Finding};

const DOCS: Docs = Docs { what: "", why: "", evidence: "", fix: "", example: "" };
static NOOP: Meta = Meta {
    code: "SL900",
    name: "noop",
    category: syslint_analyze::registry::Category::Cpu,
    status: Status::Stable,
    summary: "asks for nothing",
    docs: DOCS,
    options: &[],
    cost: registry::CostModel { metric: None, model: "" },
    interest: Interest::NONE,
    levels: registry::Levels::NONE,
};
static EVERY: Meta = Meta {
    code: "SL901",
    name: "every",
    category: syslint_analyze::registry::Category::Cpu,
    status: Status::Stable,
    summary: "asks for every event",
    docs: DOCS,
    options: &[],
    cost: registry::CostModel { metric: None, model: "" },
    interest: Interest { all_syscalls: true, exits: true, aliases: true, notes: true, ..Interest::NONE },
    levels: registry::Levels::NONE,
};

#[derive(Clone)]
struct Dummy(&'static Meta, u64);

impl Detector for Dummy {
    fn meta(&self) -> &'static Meta {
        self.0
    }
    fn on_syscall(&mut self, _cx: &Ctx, _ev: &Event, sc: &Syscall) {
        // touch the event so the call is not optimised away
        self.1 = self.1.wrapping_add(sc.sys as u64);
    }
    fn on_exit(&mut self, _cx: &Ctx, _ev: &Event) {
        self.1 = self.1.wrapping_add(1);
    }
    fn finish(&mut self, _cx: &FinishCtx) -> Vec<Finding> {
        std::hint::black_box(self.1);
        Vec::new()
    }
    fn stretch(&mut self, _by: f64) {}
}

fn detectors(config: &str) -> Vec<Box<dyn Detector>> {
    let all = || registry::build(&[], &[], &toml::Table::new()).expect("stable detectors");
    let extra = |m: &'static Meta| (0..16).map(move |_| Box::new(Dummy(m, 0)) as Box<dyn Detector>);
    match config {
        "none" => Vec::new(),
        "all" => all(),
        "all+16noop" => all().into_iter().chain(extra(&NOOP)).collect(),
        "all+16every" => all().into_iter().chain(extra(&EVERY)).collect(),
        one => registry::build(&[one.to_string()], &[], &toml::Table::new()).expect("a detector name"),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(log) = args.get(1) else {
        eprintln!("usage: dispatch LOG [ROUNDS]");
        std::process::exit(2);
    };
    let rounds: usize = args.get(2).and_then(|r| r.parse().ok()).unwrap_or(5);
    let src = syslint_capture::input::expand_sources(&[log.into()]).expect("log");
    // DISPATCH_EACH=1: also each stable detector alone, to see which one costs what
    let mut configs: Vec<&str> = vec!["none", "all", "all+16noop", "all+16every"];
    if std::env::var_os("DISPATCH_EACH").is_some() {
        configs.extend(registry::metas().iter().map(|m| m.name));
    }
    let mut events = 0u64;
    let meds = rounds::medians(configs.len(), rounds, |i| {
        let mut a = Analyzer::new(detectors(configs[i]));
        let mut n = 0u64;
        syslint_capture::read_strace(&src, Arc::new(AtomicU64::new(0)), |e| {
            a.on_event(e);
            n += 1;
        })
        .expect("read");
        let r = a.finish(Capture::default());
        std::hint::black_box(r.findings.len());
        events = n;
    });
    println!("events: {events}, rounds: {rounds} (interleaved, medians)");
    println!("| configuration | median s | ns/event | detector ns/event (over `none`) |");
    println!("|---|---:|---:|---:|");
    for (i, c) in configs.iter().enumerate() {
        println!(
            "| {c} | {:.3} | {:.0} | {:.0} |",
            meds[i],
            meds[i] * 1e9 / events as f64,
            (meds[i] - meds[0]) * 1e9 / events as f64
        );
    }
}

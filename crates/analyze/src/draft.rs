//! One way to build a finding, for every rule of every detector: [`Draft`].
//!
//! A detector says only what is particular to its finding. [`Meta::finding`] starts a draft
//! with the severity and the message, and with what every finding of the detector carries (its
//! name, its code, its general fix); the detector adds what the finding is about, over which
//! time, its metrics, its evidence and its cost; how the draft ends says what the finding stands
//! on, and adds what that kind of evidence needs:
//!
//! ```text
//! // a full trace, per program: Groups::findings makes each draft about its program
//! Some(META.finding(severity, message).over(&g.span).metrics(m).evidence(&g.evidence, cx.clock).cost(cost))
//! // a full trace, about anything else (an endpoint, a listening socket, a file)
//! META.finding(severity, message).about(name, subject).over(&e.span).metrics(m).cost(cost).build()
//! // an excerpt rule: confidence and its reason, the confirm command, at most a warning
//! META.finding(severity, message).metrics([("calls", n.into())]).lines(x.evidence(&idx, 4)).in_excerpt(x, conf, &why)
//! // a counts rule: about the processes the table counted, never error, never high
//! META.finding(severity, message).metrics([("calls", n.into())]).lines(count_lines(c, &[Sys::Fsync])).in_table(c, conf, &why)
//! ```
//!
//! What a draft is not given keeps the default of [`Finding`]: no window, metrics, evidence or
//! cost, the detector's general fix. The analyzer stamps a full-trace finding's confidence and
//! weighs its cost later ([`crate::basis::stamp_full`], [`crate::registry::weigh`]).
//!
//! [`Meta::finding`]: crate::registry::Meta::finding

use crate::basis::{counts_finding, excerpt_finding, Excerpt};
use crate::kit::{Metrics, Programs, Shown};
use crate::model::Model;
use syslint_event::Clock;
use syslint_report::{Confidence, Counts, Finding, Severity, Subject, SubjectKind, Window};

/// A finding being built (see the [module](self) for the one way to do it).
#[must_use = "a draft becomes a finding only when it is built (build, in_excerpt, in_table)"]
#[derive(Debug)]
pub struct Draft(Finding);

impl Draft {
    /// A finding of detector `name` (`code`), carrying the detector's general `fix`: what
    /// [`Meta::finding`](crate::registry::Meta::finding) starts every draft with.
    pub(crate) fn new(name: &str, code: &str, fix: &str, severity: Severity, message: String) -> Draft {
        Draft(Finding {
            detector: name.into(),
            code: code.into(),
            severity,
            message,
            fix: fix.into(),
            ..Default::default()
        })
    }

    /// About `subject` (in words), which is `about` as data.
    pub fn about(mut self, subject: impl Into<String>, about: Subject) -> Self {
        self.0.subject = subject.into();
        self.0.about = Some(about);
        self
    }

    /// About program `g`: its processes in words (`4 processes of php-fpm (pids ...)`), its name
    /// as data, and the metric `processes`, how many of them the finding counts (unless its
    /// metrics say otherwise).
    pub fn about_program(mut self, programs: &Programs, model: &Model, g: u32) -> Self {
        self.0.metrics.entry("processes".into()).or_insert_with(|| programs.processes[g as usize].into());
        let about = programs.about(g);
        self.about(programs.subject(model, g), about)
    }

    /// About the one thread of an excerpt whose calls the rule read (an excerpt finding is
    /// otherwise about the excerpt's process).
    pub fn about_the_thread(self) -> Self {
        self.about("the thread in the excerpt", Subject::new(SubjectKind::Program))
    }

    /// Over this time: a [`Span`](crate::kit::Span) (`.over(&g.span)`), or a window
    /// ([`window`](crate::kit::window)`(first, last)`).
    pub fn over(mut self, window: impl Into<Option<Window>>) -> Self {
        self.0.window = window.into();
        self
    }

    /// Its metrics: a [`Metrics`] builder, or a rule's few as a list (`[("calls", n.into())]`),
    /// over any it has.
    pub fn metrics(mut self, metrics: impl Into<Metrics>) -> Self {
        self.0.metrics.extend(metrics.into().build());
        self
    }

    /// Its evidence: lines the detector kept, rendered in the capture's notation.
    pub fn evidence(self, kept: &(impl Shown + ?Sized), clock: Clock) -> Self {
        self.lines(kept.lines(clock))
    }

    /// Its evidence as lines already written (an excerpt's calls, a table's rows, lines put
    /// together from several places).
    pub fn lines(mut self, lines: Vec<String>) -> Self {
        self.0.evidence = lines;
        self
    }

    /// The calls it counts, whose stacks are its call sites (without this, the calls its
    /// evidence lines show).
    pub fn calls(mut self, calls: &crate::kit::Calls) -> Self {
        self.0.calls = calls.pairs().iter().map(|&(t, s)| (t.0, s.name())).collect();
        self
    }

    /// What it costs, in words with numbers.
    pub fn cost(mut self, cost: impl Into<String>) -> Self {
        self.0.cost = Some(cost.into());
        self
    }

    /// A fix of its own instead of the detector's general one.
    pub fn fix(mut self, fix: impl Into<String>) -> Self {
        self.0.fix = fix.into();
        self
    }

    /// The advice case its own fix belongs to ([`Finding::advice`]), if any.
    pub fn advice(mut self, case: impl Into<Option<&'static str>>) -> Self {
        self.0.advice = case.into();
        self
    }

    /// The command that would confirm it, when a full trace of the process (the input's own
    /// default) would not show more.
    pub fn confirm(mut self, command: impl Into<String>) -> Self {
        self.0.confirm = Some(command.into());
        self
    }

    /// The finding of a full-trace rule (the analyzer stamps its confidence).
    pub fn build(self) -> Finding {
        self.0
    }

    /// The answer of an excerpt rule: this finding, with confidence `conf` (at most medium)
    /// because of `why`, the command that would confirm it, and at most a warning (an excerpt
    /// shows no cost). About the excerpt's process unless the draft names its subject.
    pub fn in_excerpt(self, x: &Excerpt, conf: Confidence, why: &str) -> Vec<Finding> {
        let d = match self.0.about {
            Some(_) => self,
            None => self.about("the process in the excerpt", Subject::new(SubjectKind::Program)),
        };
        vec![excerpt_finding(d.0, x, conf, why)]
    }

    /// The answer of a counts rule: this finding about the processes the table counted, with
    /// confidence `conf` (at most medium) because of `why`, the command that would confirm it,
    /// and at most a warning.
    pub fn in_table(self, c: &Counts, conf: Confidence, why: &str) -> Vec<Finding> {
        let about = Subject::new(SubjectKind::Program);
        vec![counts_finding(self.about("the processes the table counted", about).0, c, conf, why)]
    }
}

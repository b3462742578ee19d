pub mod agent;
pub mod analyze;
pub mod completions;
pub mod detectors;
pub mod diff;
pub mod explain;
pub mod export;
pub mod man;
pub mod otlp;
pub mod schema;
pub mod trace;

/// No finding at or above the fail level.
pub const EXIT_CLEAN: u8 = 0;
/// Findings at or above the fail level.
pub const EXIT_FINDINGS: u8 = 1;
/// syslint itself failed (bad input, bad arguments, I/O).
pub const EXIT_ERROR: u8 = 2;

/// The config found (or given) and the baseline given, read before any work: a bad file stops
/// syslint before it traces or reads gigabytes.
pub struct Judging {
    pub config: syslint_pipeline::Config,
    pub baseline: Option<syslint_pipeline::baseline::Baseline>,
}

impl Judging {
    pub fn load(r: &crate::cli::ReportArgs, d: syslint_pipeline::Discovery) -> anyhow::Result<Judging> {
        let config = syslint_pipeline::Config::load(&d)?;
        let baseline = r.baseline.as_deref().map(syslint_pipeline::baseline::Baseline::read).transpose()?;
        Ok(Judging { config, baseline })
    }

    /// The detectors the config and the flags choose.
    pub fn detectors(
        &self,
        r: &crate::cli::ReportArgs,
    ) -> anyhow::Result<Vec<Box<dyn syslint_analyze::registry::Detector>>> {
        Ok(self.config.detectors(&r.select, &r.ignore)?)
    }

    /// The report's note on the config, the baseline written (`--write-baseline`) and the
    /// findings it or `--baseline` accepts marked.
    pub fn apply(&self, report: &mut syslint_report::Report, r: &crate::cli::ReportArgs) -> anyhow::Result<()> {
        report.capture.notes.extend(self.config.note());
        if let Some(b) = &self.baseline {
            b.apply(report);
        }
        if let Some(p) = &r.write_baseline {
            let written = syslint_pipeline::baseline::write(report, p)?;
            written.apply(report);
            eprintln!(
                "syslint: wrote {} ({} finding{} accepted)",
                p.display(),
                report.findings.len(),
                if report.findings.len() == 1 { "" } else { "s" }
            );
        }
        Ok(())
    }
}

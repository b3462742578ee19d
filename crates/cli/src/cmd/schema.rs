//! `syslint schema report|diff` (hidden): the JSON Schema of a document syslint prints, derived
//! from the report types (syslint_report::schema). What docs/schema/*.schema.json hold: a unit
//! test of the report crate fails when they differ.

use crate::cli::{SchemaArgs, SchemaDocument};
use anyhow::Result;

pub fn run(a: SchemaArgs) -> Result<u8> {
    let schema = match a.document {
        SchemaDocument::Report => syslint_report::schema::report(),
        SchemaDocument::Diff => syslint_report::schema::diff(),
    };
    let mut out = crate::output::open(None)?;
    syslint_report::printers::json::write_value(&schema, &mut out)?;
    out.finish()?;
    Ok(super::EXIT_CLEAN)
}

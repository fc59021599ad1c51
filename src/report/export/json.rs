//! The JSON export: the report model as pretty JSON (the plots are left out: the
//! data they draw is there).

use super::{Export, ExportOptions, Exporter, Format};
use crate::report::{Report, ReportError};

pub struct JsonExporter;

impl Exporter for JsonExporter {
    fn format(&self) -> Format {
        Format::Json
    }

    fn render(&self, report: &Report, _options: &ExportOptions) -> Result<Export, ReportError> {
        let mut text = serde_json::to_string_pretty(report)
            .map_err(|e| ReportError::Io(format!("serialising the report: {e}")))?;
        text.push('\n');
        Ok(Export {
            text,
            assets: Vec::new(),
        })
    }
}

//! The `cincinnati` command as users run it: on saved graphs, against
//! graph-builders and policy-engines as processes, and against plain HTTP
//! servers; what it prints held to golden files and to docs/cli.md. One
//! test binary, so the suite links once.

mod command_line;
mod cvo_view;
mod dot;
mod engine_channels;
mod errors;
mod explain_path;
mod fleet;
mod golden;
mod graph_data_check;
mod help;
mod mermaid;
mod path_properties;
mod phased_preview;
mod real_servers;
mod rollout;
mod schema_doc;
mod signatures;
mod support;
mod upstream_format;

//! A graph-builder with every metric registered (built, not running), on a
//! graph file. Shared by the tests that check the metrics against
//! docs/operations.md and the operations kit.

use std::path::Path;

use graph_builder::Application;
use graph_builder::settings::Settings;

pub fn graph_builder_with_every_metric() -> Application {
    let graph = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/fixtures/secondary-metadata/20211124.083150/graph-gb-raw.json");
    let settings: Settings = toml::from_str(&format!(
        "[service]\nport = 0\npublic_port = 0\n[status]\nport = 0\n\
         [[plugin_settings]]\nname = \"release-graph-file\"\npath = {:?}\n",
        graph.display().to_string()
    ))
    .unwrap();
    Application::build(&settings).unwrap()
}

//! A graph-builder with every metric registered (built, not running), on a
//! graph file. Shared by the tests that check the metrics against
//! docs/operations.md and the operations kit.

use graph_builder::Application;
use graph_builder::settings::Settings;

pub fn graph_builder_with_every_metric() -> Application {
    let graph = super::fixture("graph-gb-raw.json");
    let settings: Settings = toml::from_str(&format!(
        "[service]\nport = 0\npublic_port = 0\n[status]\nport = 0\n\
         [[plugin_settings]]\nname = \"release-graph-file\"\npath = {:?}\n",
        graph.display().to_string()
    ))
    .unwrap();
    Application::build(&settings).unwrap()
}

use metadata_helper::MetadataHelper;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    service_kit::service::main::<MetadataHelper>(service_kit::source_commit!()).await
}

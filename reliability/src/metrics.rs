//! One sample from a Prometheus text page, and from a service's `/metrics`.

use anyhow::Context as _;
use e2e::process::ServiceProcess;

/// The value of `name` on `service`'s `/metrics` page (its status port).
pub async fn read(http: &reqwest::Client, service: &ServiceProcess, name: &str) -> anyhow::Result<f64> {
    let page = http
        .get(service.status_url("/metrics"))
        .send()
        .await?
        .text()
        .await?;
    sample(&page, name).with_context(|| format!("no {name} in {}'s metrics", service.name()))
}

/// The value of `sample` (`name` or `name{labels}`), if the page has it.
pub fn sample(page: &str, sample: &str) -> Option<f64> {
    page.lines()
        .find_map(|line| line.strip_prefix(sample)?.strip_prefix(' ')?.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_sample_by_its_whole_name() {
        let page = "# HELP x\nup_total 3\nup 1\nwith{label=\"a\"} 2.5\n";
        assert_eq!(sample(page, "up"), Some(1.0));
        assert_eq!(sample(page, "up_total"), Some(3.0));
        assert_eq!(sample(page, "with{label=\"a\"}"), Some(2.5));
        assert_eq!(sample(page, "absent"), None);
    }
}

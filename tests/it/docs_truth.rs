//! What the README says of the agents, held to the tables it is about: a moment added to an agent, or
//! one it comes to only take advice at, or a time it waits there, fails here until the README says so.

use std::path::Path;

use hookd::tables::agent::Agent;

/// The cell of the README's agent table that lists `agent`'s moments.
fn readme_moments(readme: &str, agent: Agent) -> Vec<String> {
    let row = readme
        .lines()
        .find(|line| {
            line.starts_with("| ")
                && line
                    .split('|')
                    .nth(1)
                    .is_some_and(|cell| cell.contains(agent.display_name()))
        })
        .unwrap_or_else(|| panic!("no row for {} in the README's agent table", agent.name()));
    let cell = row.split('|').nth(3).expect("a moments cell").trim();
    cell.split(", ").map(str::to_string).collect()
}

#[test]
fn the_readme_lists_every_moment_each_agent_is_served_at() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    for agent in Agent::ALL {
        let listed = readme_moments(&readme, agent);
        let moments = agent.moments();
        assert_eq!(
            listed.len(),
            moments.len(),
            "{}: the README lists {listed:?}, the table has {moments:?}",
            agent.name()
        );
        for (item, moment) in listed.iter().zip(&moments) {
            let own = agent.event_name_of(moment);
            let shown = if own == *moment {
                own.to_string()
            } else {
                format!("{own} ({moment})")
            };
            assert!(
                item.starts_with(&shown),
                "{}: the README has {item:?} where the table has {shown}",
                agent.name()
            );
            assert_eq!(
                item.contains("*advice"),
                agent.advisory(moment),
                "{}: {item:?}: advice only, or not?",
                agent.name()
            );
            let waits = agent
                .time_limit(moment)
                .map(|limit| format!("{} s*", limit.as_secs()));
            assert_eq!(
                waits.as_ref().is_some_and(|w| item.contains(w.as_str())),
                waits.is_some(),
                "{}: {item:?}: the agent waits {waits:?} there",
                agent.name()
            );
        }
    }
}

/// docs/guard.md's table of rules, held to the guard's own: a rule added, renamed or given another
/// default fails here until the page says so.
#[test]
fn the_guard_page_lists_every_rule_with_its_default() {
    let page = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/guard.md"))
        .unwrap();
    let rows: Vec<(String, String)> = page
        .lines()
        .filter(|line| line.starts_with("| `"))
        .filter_map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            Some((
                cells.get(1)?.trim_matches('`').to_string(),
                cells.get(2)?.to_string(),
            ))
        })
        .collect();
    let rules: Vec<(String, String)> = hookd::guard::RULES
        .iter()
        .map(|rule| (rule.name.to_string(), rule.default.word().to_string()))
        .collect();
    assert_eq!(rows, rules, "docs/guard.md's table of rules");
}

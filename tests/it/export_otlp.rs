//! The journal exported to an OpenTelemetry collector (docs/export.md), through the real daemon and a
//! collector written here: a loopback HTTP server that decodes what it gets with OpenTelemetry's own
//! message types (`opentelemetry-proto`: prost for `http/protobuf`, serde for `http/json`), not with
//! hookd's encoder. One record per fire with its attributes; a collector down, then up: every record
//! arrives, none twice; none lost across a daemon restart; a `headers_file` others may read refused, one
//! of the user's own sent as headers.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nix::sys::signal::Signal;
use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use prost::Message;
use serde_json::{Value, json};

use crate::common::*;

/// A log record as the collector decoded it: its fields, its attributes and its resource's as JSON
/// values (`"x"`, `true`, `3`, `[...]`, `{...}`).
#[derive(Debug, Clone)]
struct Got {
    event_name: String,
    severity: i32,
    body: String,
    time_unix_nano: u64,
    attributes: BTreeMap<String, Value>,
    resource: BTreeMap<String, Value>,
}

impl Got {
    fn attribute(&self, name: &str) -> &Value {
        self.attributes.get(name).unwrap_or(&Value::Null)
    }
}

/// Each `{"doubleValue": N}` of a JSON request checked to be a JSON number and handed to the decoder as
/// `{"stringValue": "double:N"}` ([`plain`] reads it back as the number). The test binary's serde_json
/// is built with hookd's `arbitrary_precision`, under which opentelemetry-proto's flattened `AnyValue`
/// cannot read a number as an f64; the rest of the request is decoded as sent.
fn doubles_as_text(mut value: Value) -> Value {
    fn walk(value: &mut Value) {
        match value {
            Value::Object(map) => {
                if let Some(double) = map.get("doubleValue") {
                    let number = double.as_f64().unwrap_or_else(|| {
                        panic!("a doubleValue that is not a JSON number: {double}")
                    });
                    map.clear();
                    map.insert("stringValue".into(), json!(format!("double:{number}")));
                    return;
                }
                map.values_mut().for_each(walk);
            }
            Value::Array(items) => items.iter_mut().for_each(walk),
            _ => {}
        }
    }
    walk(&mut value);
    value
}

fn plain(value: &Option<AnyValue>) -> Value {
    match value.as_ref().and_then(|v| v.value.as_ref()) {
        Some(any_value::Value::StringValue(s)) if s.starts_with("double:") => {
            json!(s["double:".len()..].parse::<f64>().unwrap())
        }
        Some(any_value::Value::StringValue(s)) => json!(s),
        Some(any_value::Value::BoolValue(b)) => json!(b),
        Some(any_value::Value::IntValue(i)) => json!(i),
        Some(any_value::Value::DoubleValue(d)) => json!(d),
        Some(any_value::Value::ArrayValue(a)) => {
            Value::Array(a.values.iter().map(|v| plain(&Some(v.clone()))).collect())
        }
        Some(any_value::Value::KvlistValue(kv)) => Value::Object(
            kv.values
                .iter()
                .map(|kv| (kv.key.clone(), plain(&kv.value)))
                .collect(),
        ),
        Some(any_value::Value::BytesValue(b)) => json!(b),
        None => Value::Null,
    }
}

fn pairs(attributes: &[KeyValue]) -> BTreeMap<String, Value> {
    attributes
        .iter()
        .map(|kv| (kv.key.clone(), plain(&kv.value)))
        .collect()
}

fn records_of(request: ExportLogsServiceRequest) -> Vec<Got> {
    let mut got = Vec::new();
    for resource_logs in request.resource_logs {
        let resource = pairs(
            &resource_logs
                .resource
                .map(|r| r.attributes)
                .unwrap_or_default(),
        );
        for scope_logs in resource_logs.scope_logs {
            assert_eq!(
                scope_logs.scope.as_ref().map(|s| s.name.as_str()),
                Some("hookd")
            );
            for record in scope_logs.log_records {
                got.push(Got {
                    event_name: record.event_name.clone(),
                    severity: record.severity_number,
                    body: match plain(&record.body) {
                        Value::String(s) => s,
                        other => other.to_string(),
                    },
                    time_unix_nano: record.time_unix_nano,
                    attributes: pairs(&record.attributes),
                    resource: resource.clone(),
                });
            }
        }
    }
    got
}

/// The collector: OTLP/HTTP on a loopback port, answering 200 to what it can decode (400 otherwise), and
/// keeping every record and every request's headers.
struct Collector {
    port: u16,
    records: Arc<Mutex<Vec<Got>>>,
    headers: Arc<Mutex<Vec<BTreeMap<String, String>>>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Collector {
    /// A port for a collector not started yet: what hookd meets is a refused connection.
    fn reserve_port() -> u16 {
        TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    }

    fn start_on(port: u16) -> Collector {
        let listener =
            TcpListener::bind(("127.0.0.1", port)).expect("binding the collector's port");
        listener.set_nonblocking(true).unwrap();
        let records: Arc<Mutex<Vec<Got>>> = Arc::default();
        let headers: Arc<Mutex<Vec<BTreeMap<String, String>>>> = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let (r, h, s) = (records.clone(), headers.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((stream, _)) => serve(stream, &r, &h),
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(5))
                    }
                    Err(e) => panic!("accept: {e}"),
                }
            }
        });
        Collector {
            port,
            records,
            headers,
            stop,
            thread: Some(thread),
        }
    }

    fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}/v1/logs", self.port)
    }

    fn records(&self) -> Vec<Got> {
        self.records.lock().unwrap().clone()
    }

    /// The decisions received, by session.
    fn decisions(&self) -> Vec<Got> {
        self.records()
            .into_iter()
            .filter(|r| r.event_name == "hookd.decision")
            .collect()
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// One HTTP/1.1 request on `stream` (hookd sends one per connection), decoded by its content type.
fn serve(
    stream: TcpStream,
    records: &Mutex<Vec<Got>>,
    headers: &Mutex<Vec<BTreeMap<String, String>>>,
) {
    stream.set_nonblocking(false).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() || !line.starts_with("POST /v1/logs HTTP/1.1") {
        return;
    }
    let mut got: BTreeMap<String, String> = BTreeMap::new();
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).unwrap();
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':').unwrap();
        got.insert(name.trim().to_ascii_lowercase(), value.trim().to_string());
    }
    let length: usize = got["content-length"].parse().unwrap();
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).unwrap();
    let decoded = match got["content-type"].as_str() {
        "application/x-protobuf" => {
            ExportLogsServiceRequest::decode(body.as_slice()).map_err(|e| e.to_string())
        }
        "application/json" => serde_json::from_slice::<Value>(&body)
            .map(doubles_as_text)
            .and_then(serde_json::from_value::<ExportLogsServiceRequest>)
            .map_err(|e| e.to_string()),
        other => Err(format!("content type {other}")),
    };
    let answer = match decoded {
        Ok(request) => {
            // The headers first: a test that sees the records reads their request's headers next.
            headers.lock().unwrap().push(got);
            records.lock().unwrap().extend(records_of(request));
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}"
                .to_string()
        }
        Err(e) => {
            eprintln!("the collector could not decode a request: {e}");
            format!(
                "HTTP/1.1 400 Bad Request\r\ncontent-length: {}\r\n\r\n{e}",
                e.len()
            )
        }
    };
    let mut stream = stream;
    let _ = stream.write_all(answer.as_bytes());
}

const DENY: (&str, &str) = ("deny.sh", "cat >/dev/null\necho 'not here' >&2\nexit 2");

fn settings(endpoint: &str, protocol: &str, extra: &str) -> String {
    format!(
        "[[hooks.PreToolUse]]\nname = \"deny-rm\"\nmatcher = \"Bash\"\ncommand = \"@DIR@/deny.sh\"\n\n\
         [export.otlp]\nendpoint = \"{endpoint}\"\nprotocol = \"{protocol}\"\n{extra}"
    )
}

fn fire_in_session(d: &Daemon, session: &str, tool: &str) -> Value {
    d.fire(
        "PreToolUse",
        json!({"session_id": session, "cwd": "/tmp", "tool_name": tool,
               "tool_input": {"command": "rm -rf build", "file_path": "/tmp/x"}}),
    )
}

/// Waits until the collector holds `n` decisions.
fn wait_for_decisions(collector: &Collector, n: usize, d: &Daemon) {
    wait_until(
        Duration::from_secs(60),
        "the collector to get every decision",
        || {
            let got = collector.decisions().len();
            assert!(
                got <= n,
                "more decisions than fires: {got} > {n}; status: {}",
                d.status()
            );
            got == n
        },
    );
}

fn one_record_per_fire_with_its_attributes(protocol: &str) {
    let collector = Collector::start_on(Collector::reserve_port());
    let d = Daemon::with_scripts(&[DENY], &settings(&collector.endpoint(), protocol, ""));
    fire_in_session(&d, "s-refused", "Bash");
    fire_in_session(&d, "s-allowed", "Write");
    wait_for_decisions(&collector, 2, &d);
    let decisions = collector.decisions();
    let refused = decisions
        .iter()
        .find(|r| r.attribute("session.id") == "s-refused")
        .unwrap_or_else(|| panic!("no record of session s-refused: {decisions:?}"));
    assert_eq!(refused.attribute("event.name"), "hookd.decision");
    assert_eq!(refused.attribute("gen_ai.agent.name"), "claude-code");
    assert_eq!(refused.attribute("gen_ai.tool.name"), "Bash");
    assert_eq!(refused.attribute("hookd.moment"), "PreToolUse");
    assert_eq!(refused.attribute("hookd.decision"), "refused");
    assert_eq!(refused.attribute("hookd.held_back"), true);
    assert_eq!(refused.attribute("hookd.hook"), "deny-rm");
    assert_eq!(refused.attribute("hookd.reason"), "not here");
    assert_eq!(refused.attribute("hookd.summary"), "rm -rf build");
    assert_eq!(refused.attribute("hookd.settings.generation"), 1);
    let text = std::fs::read(&d.config).unwrap();
    let digest: String = {
        use sha2::Digest;
        sha2::Sha256::digest(&text)[..8]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    };
    assert_eq!(refused.attribute("hookd.settings.digest"), digest.as_str());
    assert!(
        refused.attribute("hookd.duration_ms").as_f64().is_some(),
        "{refused:?}"
    );
    assert_eq!(refused.attribute("hookd.hooks")[0]["name"], "deny-rm");
    assert_eq!(refused.attribute("hookd.hooks")[0]["outcome"], "refused");
    assert_eq!(refused.attribute("hookd.hooks")[0]["exit"], 2);
    assert_eq!(refused.severity, 13, "a refusal is a WARN");
    assert_eq!(refused.body, "refused Bash: rm -rf build");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    assert!(
        refused.time_unix_nano <= now && now - refused.time_unix_nano < 600_000_000_000,
        "the fire's own moment: {}",
        refused.time_unix_nano
    );
    assert_eq!(refused.resource["service.name"], "hookd");
    assert_eq!(
        refused.resource["service.version"],
        env!("CARGO_PKG_VERSION")
    );
    assert!(
        refused.resource["host.name"]
            .as_str()
            .is_some_and(|h| !h.is_empty())
    );
    assert!(refused.resource["user.id"].as_str().is_some());
    let allowed = decisions
        .iter()
        .find(|r| r.attribute("session.id") == "s-allowed")
        .unwrap();
    assert_eq!(allowed.attribute("hookd.decision"), "none");
    assert_eq!(allowed.attribute("gen_ai.tool.name"), "Write");
    assert_eq!(allowed.severity, 9);
    // The collector has them before hookd reads its answer: status counts them once it has.
    let sent = collector.records().len() as u64;
    wait_until(
        Duration::from_secs(30),
        "status to count what was sent",
        || d.status()["export"]["sent"].as_u64() == Some(sent),
    );
    let status = d.status();
    assert_eq!(status["export"]["protocol"], protocol, "{status}");
    assert_eq!(
        status["export"]["endpoint"],
        collector.endpoint().as_str(),
        "{status}"
    );
}

#[test]
fn each_fire_is_one_hookd_decision_with_its_attributes_over_protobuf() {
    one_record_per_fire_with_its_attributes("http/protobuf");
}

#[test]
fn each_fire_is_one_hookd_decision_with_its_attributes_over_json() {
    one_record_per_fire_with_its_attributes("http/json");
}

#[test]
fn redacted_the_decision_arrives_without_what_was_asked_or_said() {
    let collector = Collector::start_on(Collector::reserve_port());
    let d = Daemon::with_scripts(
        &[DENY],
        &settings(
            &collector.endpoint(),
            "http/protobuf",
            "redact = true\nkinds = [\"fire\"]\ndecisions = [\"refused\"]\n",
        ),
    );
    fire_in_session(&d, "s-allowed", "Write");
    fire_in_session(&d, "s-refused", "Bash");
    wait_for_decisions(&collector, 1, &d);
    let got = &collector.decisions()[0];
    assert_eq!(
        got.attribute("session.id"),
        "s-refused",
        "only refusals are sent"
    );
    assert_eq!(got.attribute("hookd.decision"), "refused");
    assert_eq!(got.attribute("hookd.hook"), "deny-rm");
    for gone in ["hookd.summary", "hookd.reason", "hookd.input"] {
        assert_eq!(got.attribute(gone), &Value::Null, "{gone} in {got:?}");
    }
    assert!(
        got.attribute("hookd.hooks")[0].get("stderr").is_none(),
        "{got:?}"
    );
    assert_eq!(got.body, "refused Bash");
    // The allowed fire was read past, not sent: the exporter catches up with one record sent.
    wait_until(Duration::from_secs(30), "the exporter to catch up", || {
        let status = d.status();
        status["export"]["state"] == "caught_up" && status["export"]["sent"] == 1
    });
    assert_eq!(collector.decisions().len(), 1);
}

#[test]
fn a_collector_down_then_up_gets_every_record_once() {
    let port = Collector::reserve_port();
    let endpoint = format!("http://127.0.0.1:{port}/v1/logs");
    let d = Daemon::with_scripts(&[DENY], &settings(&endpoint, "http/protobuf", ""));
    for i in 0..20 {
        fire_in_session(&d, &format!("s-{i}"), "Bash");
    }
    // The fires were answered while nothing listened; the exporter says what stops it.
    wait_until(
        Duration::from_secs(30),
        "the exporter to say the collector is down",
        || d.status()["export"]["state"] == "retrying",
    );
    let status = d.status();
    assert!(
        status["export"]["last_error"]
            .as_str()
            .is_some_and(|e| e.contains("cannot connect")),
        "{status}"
    );
    assert!(
        status["export"]["backlog_bytes"].as_u64() > Some(0),
        "{status}"
    );
    // For people: doctor's warning (status's line for people is held by its unit test).
    let socket = d.socket.to_str().unwrap();
    let doctor = text(
        &run_hookd(
            &["doctor", "--socket", socket],
            None,
            Duration::from_secs(20),
        )
        .stdout,
    );
    assert!(
        doctor.contains(&format!(
            "the export to {endpoint} is not getting through (cannot connect"
        )),
        "{doctor}"
    );
    let collector = Collector::start_on(port);
    wait_for_decisions(&collector, 20, &d);
    let mut sessions: Vec<String> = collector
        .decisions()
        .iter()
        .map(|r| r.attribute("session.id").as_str().unwrap().to_string())
        .collect();
    sessions.sort();
    sessions.dedup();
    assert_eq!(sessions.len(), 20, "each fire once: {sessions:?}");
    wait_until(Duration::from_secs(30), "the exporter to catch up", || {
        d.status()["export"]["state"] == "caught_up"
    });
    let status = d.status();
    assert_eq!(status["export"]["backlog_bytes"], 0, "{status}");
    assert!(status["export"]["last_error"].is_null(), "{status}");
    assert!(status["export"]["last_sent"].is_string(), "{status}");
    // Nothing is sent twice afterwards either.
    fire_in_session(&d, "s-after", "Bash");
    wait_for_decisions(&collector, 21, &d);
}

#[test]
fn no_record_is_lost_across_a_daemon_restart() {
    let port = Collector::reserve_port();
    let endpoint = format!("http://127.0.0.1:{port}/v1/logs");
    let mut d = Daemon::with_scripts(&[DENY], &settings(&endpoint, "http/json", ""));
    for i in 0..5 {
        fire_in_session(&d, &format!("before-{i}"), "Bash");
    }
    wait_until(Duration::from_secs(30), "the exporter to retry", || {
        d.status()["export"]["state"] == "retrying"
    });
    d.signal(Signal::SIGTERM);
    d.wait_exit(Duration::from_secs(30));
    let sb = std::mem::take(&mut d.sb);
    drop(d);
    let d = Daemon::start(sb);
    for i in 0..5 {
        fire_in_session(&d, &format!("after-{i}"), "Bash");
    }
    let collector = Collector::start_on(port);
    wait_for_decisions(&collector, 10, &d);
    let mut sessions: Vec<String> = collector
        .decisions()
        .iter()
        .map(|r| r.attribute("session.id").as_str().unwrap().to_string())
        .collect();
    sessions.sort();
    let mut expected: Vec<String> = (0..5)
        .flat_map(|i| [format!("before-{i}"), format!("after-{i}")])
        .collect();
    expected.sort();
    assert_eq!(sessions, expected);
}

#[test]
fn a_headers_file_others_may_read_is_refused_and_ones_own_is_sent() {
    let collector = Collector::start_on(Collector::reserve_port());
    let sb = Sandbox::new();
    sb.script(DENY.0, DENY.1);
    let headers = sb.p("otlp-headers");
    std::fs::write(
        &headers,
        "# the team's token\nAuthorization: Bearer s3cret\n",
    )
    .unwrap();
    std::fs::set_permissions(&headers, std::fs::Permissions::from_mode(0o644)).unwrap();
    sb.settings(&settings(
        &collector.endpoint(),
        "http/protobuf",
        "headers_file = \"@DIR@/otlp-headers\"\n",
    ));
    let config = sb.config();
    let out = run_hookd(
        &["check", "--config", config.to_str().unwrap()],
        None,
        Duration::from_secs(20),
    );
    let stderr = text(&out.stderr);
    assert_ne!(code(&out.status), 0, "{stderr}");
    assert!(
        stderr.contains(&format!(
            "{}:9:16: export.otlp.refused: headers_file {} may be read or written by group or others (mode 0644)",
            config.display(),
            headers.display()
        )) && stderr.contains("chmod 600"),
        "{stderr}"
    );
    assert!(!stderr.contains("s3cret"), "{stderr}");
    std::fs::set_permissions(&headers, std::fs::Permissions::from_mode(0o600)).unwrap();
    let d = Daemon::start(sb);
    fire_in_session(&d, "s-1", "Bash");
    wait_for_decisions(&collector, 1, &d);
    let sent = collector.headers.lock().unwrap().clone();
    assert_eq!(
        sent[0].get("authorization").map(String::as_str),
        Some("Bearer s3cret")
    );
}

#[test]
fn an_https_endpoint_is_refused_at_its_place_with_the_way_round() {
    let sb = Sandbox::new();
    sb.settings("[export.otlp]\nendpoint = \"https://otel.example.com/v1/logs\"\n");
    let config = sb.config();
    let out = run_hookd(
        &["check", "--config", config.to_str().unwrap()],
        None,
        Duration::from_secs(20),
    );
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "{}:2:12: export.otlp.endpoint \"https://otel.example.com/v1/logs\" is https",
            config.display()
        )) && stderr.contains("run an OpenTelemetry Collector on this machine"),
        "{stderr}"
    );
}

/// The relays never link the exporter (nor hyper's client): an agent's every tool call starts one, and
/// it stays small and quick to start. Read from the relay's symbols, as `nm` lists them.
#[test]
fn the_relay_does_not_link_the_exporter() {
    if !require(on_path("nm"), "nm (binutils) lists the relay's symbols") {
        return;
    }
    let mut nm = std::process::Command::new("nm");
    nm.arg("--demangle").arg(RELAY_BIN);
    let out = run_with_deadline(nm, None, Duration::from_secs(60));
    let symbols = text(&out.stdout);
    assert!(
        symbols.contains("hookd::commands::relay"),
        "nm gave no symbols of the relay: {}",
        text(&out.stderr)
    );
    let linked: Vec<&str> = symbols
        .lines()
        .filter(|s| s.contains("hookd::export::") || s.contains("hyper::client::"))
        .take(5)
        .collect();
    assert!(
        linked.is_empty(),
        "the relay links the exporter: {linked:?}"
    );
}

/// A reload applies `[export.otlp]`: turned on, it sends what is recorded from then on (not the history
/// before it); its endpoint changed, the next records go to the new collector.
#[test]
fn a_reload_turns_the_export_on_and_moves_it() {
    let first = Collector::start_on(Collector::reserve_port());
    let second = Collector::start_on(Collector::reserve_port());
    let d = Daemon::with_scripts(
        &[DENY],
        "[[hooks.PreToolUse]]\nname = \"deny-rm\"\nmatcher = \"Bash\"\ncommand = \"@DIR@/deny.sh\"\n",
    );
    fire_in_session(&d, "s-before", "Bash");
    assert_eq!(d.status()["export"]["state"], "off");
    let reload_to = |endpoint: &str, generation: u64| {
        d.sb.settings(&settings(endpoint, "http/protobuf", ""));
        wait_until(Duration::from_secs(30), "the reload", || {
            let status = d.status();
            status["generation"] == generation
                && status["export"]["endpoint"] == endpoint
                && status["export"]["state"] != "off"
        });
    };
    reload_to(&first.endpoint(), 2);
    fire_in_session(&d, "s-first", "Bash");
    wait_for_decisions(&first, 1, &d);
    assert_eq!(first.decisions()[0].attribute("session.id"), "s-first");
    assert_eq!(
        first.decisions()[0].attribute("hookd.settings.generation"),
        2
    );
    reload_to(&second.endpoint(), 3);
    fire_in_session(&d, "s-second", "Bash");
    wait_for_decisions(&second, 1, &d);
    assert_eq!(second.decisions()[0].attribute("session.id"), "s-second");
    assert_eq!(first.decisions().len(), 1, "{:?}", first.decisions());
}

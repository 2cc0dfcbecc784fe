//! HTTPServer over real sockets: a router with traffic runs in a
//! background thread (real time) and the tests speak HTTP/1.1 to it.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use rclick_core::RouterOptions;
use rclick_elements::testing::{config_errors_with, RouterThread};
use serde_json::Value;

const TIMEOUT: Duration = Duration::from_secs(10);

const TRAFFIC: &str = "
    src :: RatedSource(RATE 2000) -> c :: Counter -> q :: Queue(1000)
        -> u :: RatedUnqueue(RATE 1000) -> d :: Discard;
    http :: HTTPServer(0);
";

/// A router running in its own thread.
struct Running {
    _router: RouterThread,
    port: u16,
}

impl Running {
    /// Starts `config`; the element `http` must be the HTTPServer.
    fn start(config: &str) -> Running {
        Self::start_opts(config, false)
    }

    fn start_opts(config: &str, hotswap: bool) -> Running {
        let opts = RouterOptions {
            hotswap,
            capture_chatter: true,
            ..Default::default()
        };
        let router = RouterThread::start(config, opts, "http.port", TIMEOUT);
        let port = router.port;
        assert_ne!(port, 0);
        Running {
            _router: router,
            port,
        }
    }

    fn connect(&self) -> TcpStream {
        let s = TcpStream::connect(("127.0.0.1", self.port)).expect("connect");
        s.set_read_timeout(Some(TIMEOUT)).unwrap();
        s.set_write_timeout(Some(TIMEOUT)).unwrap();
        s
    }

    /// Sends raw bytes and reads the whole response (the server closes).
    fn raw(&self, request: &[u8]) -> Reply {
        let mut s = self.connect();
        s.write_all(request).expect("send");
        read_reply(&mut s)
    }

    fn get(&self, path: &str) -> Reply {
        self.raw(format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").as_bytes())
    }

    fn post(&self, path: &str, body: &str) -> Reply {
        self.raw(
            format!(
                "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\n\
                 Content-Length: {}\r\n\r\n{body}",
                body.len()
            )
            .as_bytes(),
        )
    }

    fn read_value(&self, handler: &str) -> String {
        let r = self.get(&format!("/api/handler/{handler}"));
        assert_eq!(r.status, 200, "{}", r.text());
        r.json()["value"].as_str().expect("value").to_string()
    }

    fn read_number(&self, handler: &str) -> f64 {
        self.read_value(handler).trim().parse().expect("number")
    }
}

#[derive(Debug)]
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    fn json(&self) -> Value {
        assert_eq!(
            self.header("content-type"),
            Some("application/json"),
            "{self:?}"
        );
        serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.text()))
    }

    fn error(&self) -> String {
        let j = self.json();
        assert_eq!(j["ok"], Value::Bool(false));
        j["error"].as_str().expect("error text").to_string()
    }
}

fn read_reply(s: &mut TcpStream) -> Reply {
    let mut buf = Vec::new();
    s.read_to_end(&mut buf).expect("read response");
    parse_reply(&buf)
}

fn parse_reply(buf: &[u8]) -> Reply {
    let end = buf
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no head in {:?}", String::from_utf8_lossy(buf)));
    let head = String::from_utf8_lossy(&buf[..end]).into_owned();
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or("");
    let mut parts = status_line.splitn(3, ' ');
    assert_eq!(parts.next(), Some("HTTP/1.1"));
    let status: u16 = parts.next().and_then(|s| s.parse().ok()).expect("status");
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let body = buf[end + 4..].to_vec();
    let r = Reply {
        status,
        headers,
        body,
    };
    if let (Some(len), false) = (r.header("content-length"), r.body.is_empty()) {
        assert_eq!(
            len.parse::<usize>().unwrap(),
            r.body.len(),
            "Content-Length"
        );
    }
    assert_eq!(r.header("connection"), Some("close"));
    r
}

/// Polls `f` until it returns true or the timeout passes.
fn eventually(mut f: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + TIMEOUT;
    while Instant::now() < deadline {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

#[test]
fn router_description() {
    let r = Running::start(TRAFFIC);
    let reply = r.get("/api/router");
    assert_eq!(reply.status, 200);
    let j = reply.json();
    assert!(j["generation"].as_u64().is_some());
    let els = j["elements"].as_array().expect("elements");
    let names: Vec<&str> = els.iter().map(|e| e["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["src", "c", "q", "u", "d", "http"]);
    let by = |n: &str| els.iter().find(|e| e["name"] == n).unwrap().clone();
    let c = by("c");
    assert_eq!(c["class"], "Counter");
    assert_eq!(c["index"], 1);
    assert_eq!(
        c["inputs"],
        serde_json::json!([{"mode": "push", "agnostic": true}])
    );
    assert_eq!(
        c["outputs"],
        serde_json::json!([{"mode": "push", "agnostic": true}])
    );
    let q = by("q");
    assert_eq!(q["config"], "1000");
    assert_eq!(q["inputs"][0]["mode"], "push");
    assert_eq!(q["inputs"][0]["agnostic"], false);
    assert_eq!(q["outputs"][0]["mode"], "pull");
    assert_eq!(by("u")["inputs"][0]["mode"], "pull");
    assert_eq!(by("src")["config"], "RATE 2000");
    assert_eq!(by("http")["inputs"], serde_json::json!([]));

    let h = |e: &Value, name: &str| {
        e["handlers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["name"] == name)
            .unwrap_or_else(|| panic!("no handler {name}"))
            .clone()
    };
    let count = h(&c, "count");
    assert_eq!(count["flags"], "r");
    assert_eq!(count["read"], true);
    assert_eq!(count["write"], false);
    let reset = h(&c, "reset");
    assert_eq!(reset["flags"], "wb");
    assert_eq!(reset["button"], true);
    let cap = h(&q, "capacity");
    assert_eq!(cap["flags"], "rw."); // calm, as in Click
                                     // The server's own handlers are listed too.
    h(&by("http"), "port");
    h(&by("http"), "requests");

    let conns = j["connections"].as_array().unwrap();
    assert_eq!(conns.len(), 4);
    assert!(conns.iter().any(|c| c["from"] == 1
        && c["from_name"] == "c"
        && c["from_port"] == 0
        && c["to"] == 2
        && c["to_name"] == "q"
        && c["to_port"] == 0));
    let globals = j["global_handlers"].as_array().unwrap();
    assert!(globals.iter().any(|g| g["name"] == "version"));
    assert!(globals
        .iter()
        .any(|g| g["name"] == "stop" && g["write"] == true));
}

#[test]
fn handler_values_change_and_errors_are_per_handler() {
    let r = Running::start(TRAFFIC);
    let values = |r: &Running| {
        let reply = r.get("/api/handlers?names=c.count,q.capacity,nope.count,c.nope,c.reset");
        assert_eq!(reply.status, 200);
        reply.json()["handlers"].clone()
    };
    let first = values(&r);
    assert_eq!(
        first["q.capacity"]["value"].as_str().unwrap().trim(),
        "1000"
    );
    assert_eq!(first["nope.count"]["error"], "no element named 'nope'");
    assert_eq!(first["c.nope"]["error"], "no handler named 'c.nope'");
    assert_eq!(first["c.reset"]["error"], "handler 'c.reset' is write-only");
    let n0: u64 = first["c.count"]["value"]
        .as_str()
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(eventually(|| {
        let v = values(&r);
        v["c.count"]["value"]
            .as_str()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .is_some_and(|n| n > n0)
    }));
    // Percent-encoded names, and the missing parameter.
    let enc = r.get("/api/handlers?names=c%2Ecount%2Cq.length");
    let j = enc.json();
    assert!(j["handlers"]["c.count"]["value"].is_string());
    assert!(j["handlers"]["q.length"]["value"].is_string());
    let missing = r.get("/api/handlers");
    assert_eq!(missing.status, 400);
    assert!(missing.error().contains("names="));

    // One handler, with and without a parameter.
    let one = r.get("/api/handler/c.count");
    assert_eq!(one.status, 200);
    assert_eq!(one.json()["handler"], "c.count");
    let global = r.get("/api/handler/version");
    assert_eq!(global.status, 200);
    assert!(!global.json()["value"].as_str().unwrap().is_empty());
}

#[test]
fn counters_list_numeric_handlers() {
    let r = Running::start(TRAFFIC);
    let j = r.get("/api/counters").json();
    let els = &j["elements"];
    assert!(els["c"]["count"].is_u64());
    assert!(els["c"]["byte_count"].is_u64());
    assert_eq!(els["q"]["capacity"], 1000);
    assert!(els["q"]["length"].is_u64());
    assert!(els["q"]["drops"].is_u64());
    // Non-numeric handlers never appear.
    assert!(els["c"].get("class").is_none());
    assert!(els["q"].get("config").is_none());
    assert_eq!(j["generation"], r.get("/api/router").json()["generation"]);
}

/// One parsed sample line of the text format.
#[derive(Debug)]
struct Sample {
    name: String,
    labels: Vec<(String, String)>,
    value: f64,
}

/// A small parser of the Prometheus text exposition format: checks that
/// every sample belongs to a family declared by `# TYPE` before it, that
/// label values are properly quoted and escaped, and that values parse.
fn parse_exposition(text: &str) -> Result<Vec<Sample>, String> {
    let mut types: Vec<(String, String)> = Vec::new();
    let mut samples = Vec::new();
    let mut family_done: Vec<String> = Vec::new();
    let mut current: Option<String> = None;
    if !text.ends_with('\n') {
        return Err("no final newline".into());
    }
    for line in text.lines() {
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix("# ") {
            let mut w = rest.splitn(3, ' ');
            match (w.next(), w.next(), w.next()) {
                (Some("TYPE"), Some(name), Some(t)) => {
                    if !["counter", "gauge", "histogram", "summary", "untyped"].contains(&t) {
                        return Err(format!("bad type {t}"));
                    }
                    if types.iter().any(|(n, _)| n == name) {
                        return Err(format!("TYPE {name} twice"));
                    }
                    types.push((name.to_string(), t.to_string()));
                }
                (Some("HELP"), Some(_), _) => {}
                _ => {}
            }
            continue;
        }
        let name_end = line.find(['{', ' ']).ok_or(format!("bad line {line}"))?;
        let name = &line[..name_end];
        if !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
            || name.starts_with(|c: char| c.is_ascii_digit())
        {
            return Err(format!("bad metric name {name}"));
        }
        let mut rest = &line[name_end..];
        let mut labels = Vec::new();
        if let Some(r) = rest.strip_prefix('{') {
            let b = r.as_bytes();
            let mut i = 0;
            loop {
                if b.get(i) == Some(&b'}') {
                    i += 1;
                    break;
                }
                let eq = r[i..].find('=').ok_or("label without =")? + i;
                let lname = r[i..eq].to_string();
                if b.get(eq + 1) != Some(&b'"') {
                    return Err("unquoted label value".into());
                }
                let mut j = eq + 2;
                let mut val = String::new();
                loop {
                    match b.get(j) {
                        None => return Err("unterminated label value".into()),
                        Some(b'\\') => {
                            match b.get(j + 1) {
                                Some(b'\\') => val.push('\\'),
                                Some(b'"') => val.push('"'),
                                Some(b'n') => val.push('\n'),
                                _ => return Err("bad escape".into()),
                            }
                            j += 2;
                        }
                        Some(b'"') => break,
                        Some(b'\n') => return Err("raw newline".into()),
                        Some(_) => {
                            let ch = r[j..].chars().next().unwrap();
                            val.push(ch);
                            j += ch.len_utf8();
                        }
                    }
                }
                labels.push((lname, val));
                i = j + 1;
                if b.get(i) == Some(&b',') {
                    i += 1;
                }
            }
            rest = &r[i..];
        }
        let value_text = rest
            .strip_prefix(' ')
            .ok_or(format!("no space before value: {line}"))?;
        let value: f64 = value_text
            .split(' ')
            .next()
            .unwrap_or("")
            .parse()
            .map_err(|_| format!("bad value in {line}"))?;
        if !types.iter().any(|(n, _)| n == name) {
            return Err(format!("sample {name} before its TYPE line"));
        }
        if current.as_deref() != Some(name) {
            if family_done.iter().any(|f| f == name) {
                return Err(format!("family {name} is not contiguous"));
            }
            if let Some(c) = current.take() {
                family_done.push(c);
            }
            current = Some(name.to_string());
        }
        samples.push(Sample {
            name: name.to_string(),
            labels,
            value,
        });
    }
    Ok(samples)
}

#[test]
fn the_exposition_parser_catches_mistakes() {
    assert!(parse_exposition("# TYPE a gauge\na 1\n").is_ok());
    assert!(parse_exposition("a 1\n").is_err());
    assert!(parse_exposition("# TYPE a gauge\na{x=\"1} 1\n").is_err());
    assert!(parse_exposition("# TYPE a gauge\na{x=\"a\\q\"} 1\n").is_err());
    assert!(parse_exposition("# TYPE a gauge\na{x=\"1\"} one\n").is_err());
    let s = parse_exposition("# TYPE a gauge\na{x=\"q\\\"\\\\\\n\",y=\"\"} -2.5\n").unwrap();
    assert_eq!(
        s[0].labels,
        [("x".into(), "q\"\\\n".into()), ("y".into(), String::new())]
    );
}

#[test]
fn metrics_in_prometheus_text_format() {
    let r = Running::start(TRAFFIC);
    let reply = r.get("/metrics");
    assert_eq!(reply.status, 200);
    assert_eq!(
        reply.header("content-type"),
        Some("text/plain; version=0.0.4; charset=utf-8")
    );
    let text = reply.text();
    assert!(text.contains("# TYPE rclick_handler gauge\n"), "{text}");
    let samples = parse_exposition(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let find = |elem: &str, h: &str| {
        samples.iter().find(|s| {
            s.name == "rclick_handler"
                && s.labels.iter().any(|(k, v)| k == "element" && v == elem)
                && s.labels.iter().any(|(k, v)| k == "handler" && v == h)
        })
    };
    let count = find("c", "count").expect("c.count");
    assert_eq!(
        count.labels,
        [
            ("element".into(), "c".into()),
            ("class".into(), "Counter".into()),
            ("handler".into(), "count".into())
        ]
    );
    for (e, h) in [
        ("c", "byte_count"),
        ("q", "length"),
        ("q", "highwater_length"),
        ("q", "capacity"),
        ("q", "drops"),
        ("src", "count"),
    ] {
        assert!(find(e, h).is_some(), "{e}.{h} missing:\n{text}");
    }
    assert_eq!(find("q", "capacity").unwrap().value, 1000.0);
    assert!(find("c", "config").is_none());
    assert!(find("c", "name").is_none());
    let before = count.value;
    assert!(eventually(|| {
        let t = r.get("/metrics").text();
        parse_exposition(&t)
            .ok()
            .and_then(|s| {
                s.into_iter()
                    .find(|s| s.labels.iter().any(|(k, v)| k == "element" && v == "c"))
                    .map(|s| s.value)
            })
            .is_some_and(|v| v > before)
    }));
}

#[test]
fn writes_take_effect() {
    let r = Running::start(TRAFFIC);
    let reply = r.post("/api/handler/q.capacity", "1234");
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert_eq!(
        reply.json(),
        serde_json::json!({"ok": true, "handler": "q.capacity"})
    );
    assert_eq!(r.read_value("q.capacity").trim(), "1234");

    let reply = r.post("/api/handler/src.rate", "250");
    assert_eq!(reply.status, 200);
    assert_eq!(r.read_number("src.rate"), 250.0);

    // A button: an empty body.
    assert!(eventually(|| r.read_number("c.count") > 100.0));
    assert_eq!(r.post("/api/handler/c.reset", "").status, 200);
    assert!(r.read_number("c.count") < 100.0);

    // Stopping the router through the global handler.
    let reply = r.post("/api/handler/stop", "");
    assert_eq!(reply.status, 200, "{}", reply.text());
}

#[test]
fn errors_have_clear_statuses() {
    let r = Running::start(TRAFFIC);
    let e = r.get("/api/handler/nope.count");
    assert_eq!(e.status, 404);
    assert_eq!(e.error(), "no element named 'nope'");
    let e = r.post("/api/handler/nope.count", "1");
    assert_eq!(e.status, 404);
    let e = r.get("/api/handler/c.nope");
    assert_eq!(e.status, 404);
    assert_eq!(e.error(), "no handler named 'c.nope'");
    let e = r.post("/api/handler/c.count", "5");
    assert_eq!(e.status, 405);
    assert_eq!(e.error(), "handler 'c.count' is read-only");
    assert_eq!(e.header("allow"), Some("GET, HEAD"));
    let e = r.get("/api/handler/c.reset");
    assert_eq!(e.status, 405);
    assert_eq!(e.error(), "handler 'c.reset' is write-only");
    assert_eq!(e.header("allow"), Some("POST"));
    // The handler's own error text.
    let e = r.post("/api/handler/q.capacity", "lots");
    assert_eq!(e.status, 400);
    assert!(!e.error().is_empty());
    assert_eq!(r.read_value("q.capacity").trim(), "1000");
    // Resources and methods.
    let e = r.get("/nothing/here");
    assert_eq!(e.status, 404);
    assert!(e.error().contains("/nothing/here"));
    let e = r.post("/metrics", "");
    assert_eq!(e.status, 405);
    assert_eq!(e.header("allow"), Some("GET, HEAD"));
    let e = r.raw(b"DELETE /api/handler/c.count HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    assert_eq!(e.status, 405);
    // Malformed requests.
    let e = r.raw(b"GET\x01 / HTTP/1.1\r\n\r\n");
    assert_eq!(e.status, 400);
    let e = r.raw(b"GET / HTTP/1.1\r\nContent-Length: many\r\n\r\n");
    assert_eq!(e.status, 400);
    let e = r.raw(
        b"POST /api/handler/q.capacity HTTP/1.1\r\nHost: 127.0.0.1\r\n\
          Transfer-Encoding: chunked\r\n\r\n4\r\n1000\r\n0\r\n\r\n",
    );
    assert_eq!(e.status, 411);
    // Cross-site writes and DNS rebinding.
    let e = r.raw(
        b"POST /api/handler/q.capacity HTTP/1.1\r\nHost: 127.0.0.1\r\n\
          Origin: http://evil.example\r\nContent-Length: 2\r\n\r\n10",
    );
    assert_eq!(e.status, 403);
    assert!(e.error().contains("cross-origin"));
    let e = r.raw(b"GET /api/router HTTP/1.1\r\nHost: evil.example:80\r\n\r\n");
    assert_eq!(e.status, 403);
    assert_eq!(r.read_value("q.capacity").trim(), "1000");
    // Same-origin writes from the page are fine.
    let host = format!("127.0.0.1:{}", r.port);
    let e = r.raw(
        format!(
            "POST /api/handler/q.capacity HTTP/1.1\r\nHost: {host}\r\n\
             Origin: http://{host}\r\nContent-Length: 3\r\n\r\n900"
        )
        .as_bytes(),
    );
    assert_eq!(e.status, 200, "{}", e.text());
}

#[test]
fn readonly_server_refuses_writes() {
    let r = Running::start(
        "src :: RatedSource(RATE 100) -> q :: Queue -> Discard;
         http :: HTTPServer(0, READONLY true);",
    );
    let e = r.post("/api/handler/q.capacity", "5");
    assert_eq!(e.status, 403);
    assert!(e.error().contains("read-only"));
    assert_eq!(r.get("/api/handler/q.capacity").status, 200);
}

#[test]
fn oversized_requests_are_rejected() {
    let r = Running::start(
        "src :: RatedSource(RATE 100) -> q :: Queue -> Discard;
         http :: HTTPServer(0, MAX_BODY 1000);",
    );
    // Announced too large: answered before the body is sent.
    let e = r.raw(
        b"POST /api/handler/q.capacity HTTP/1.1\r\nHost: 127.0.0.1\r\n\
          Content-Length: 100000000\r\n\r\n",
    );
    assert_eq!(e.status, 413);
    assert!(e.error().contains("1000 bytes"));
    // At the limit is fine.
    let body = format!("{:<1000}", "77");
    assert_eq!(r.post("/api/handler/q.capacity", &body).status, 200);
    assert_eq!(r.read_value("q.capacity").trim(), "77");
    // A head larger than 16 KiB.
    let big = format!(
        "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: {}\r\n\r\n",
        "a".repeat(20 << 10)
    );
    assert_eq!(r.raw(big.as_bytes()).status, 431);
    let endless = format!("GET /{} HTTP/1.1\r\n", "a".repeat(40 << 10));
    let mut s = r.connect();
    let _ = s.write_all(endless.as_bytes());
    assert_eq!(read_reply(&mut s).status, 431);
    // Too many header fields.
    let many: String = (0..100).map(|i| format!("X-H{i}: v\r\n")).collect();
    let e = r.raw(format!("GET / HTTP/1.1\r\n{many}\r\n").as_bytes());
    assert_eq!(e.status, 431);
}

#[test]
fn expect_continue_and_head() {
    let r = Running::start(TRAFFIC);
    let mut s = r.connect();
    s.write_all(
        b"POST /api/handler/q.capacity HTTP/1.1\r\nHost: 127.0.0.1\r\n\
          Expect: 100-continue\r\nContent-Length: 3\r\n\r\n",
    )
    .unwrap();
    let mut first = [0u8; 25];
    s.read_exact(&mut first).unwrap();
    assert_eq!(&first, b"HTTP/1.1 100 Continue\r\n\r\n");
    s.write_all(b"321").unwrap();
    assert_eq!(read_reply(&mut s).status, 200);
    assert_eq!(r.read_value("q.capacity").trim(), "321");

    let head = r.raw(b"HEAD /api/router HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    assert_eq!(head.status, 200);
    assert!(head.body.is_empty());
}

#[test]
fn the_page_and_its_assets() {
    let r = Running::start(TRAFFIC);
    let page = r.get("/");
    assert_eq!(page.status, 200);
    assert_eq!(
        page.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    let html = page.text();
    assert!(html.contains("<svg id=\"graph\""));
    assert!(html.contains("/live.js"));
    assert!(!html.contains("http://") || html.contains("http://www.w3.org/2000/svg"));
    let js = r.get("/live.js");
    assert_eq!(
        js.header("content-type"),
        Some("text/javascript; charset=utf-8")
    );
    assert!(js.text().contains("/api/router"));
    let css = r.get("/live.css");
    assert_eq!(css.header("content-type"), Some("text/css; charset=utf-8"));
    // No resource from elsewhere: the page must work offline.
    for body in [html, js.text(), css.text()] {
        assert!(!body.contains("https://"), "external resource");
    }
}

#[test]
fn slow_clients_do_not_block_others_or_packets() {
    let r = Running::start(TRAFFIC);
    // A client sending its request one byte at a time, never finishing.
    let mut slow = r.connect();
    slow.write_all(b"GET /api/rou").unwrap();
    // A client that never reads a large response.
    let mut lazy = Vec::new();
    for _ in 0..8 {
        let mut s = r.connect();
        s.write_all(b"GET /api/router HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            .unwrap();
        lazy.push(s);
    }
    // Idle connections.
    let idle: Vec<TcpStream> = (0..50).map(|_| r.connect()).collect();
    let start_count = r.read_number("c.count");
    let t0 = Instant::now();
    for _ in 0..40 {
        assert_eq!(r.get("/api/handlers?names=c.count").status, 200);
    }
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
    // Packets kept flowing meanwhile.
    assert!(eventually(|| r.read_number("c.count") > start_count));
    // Many clients at once, from several threads.
    let port = r.port;
    let workers: Vec<_> = (0..8)
        .map(|_| {
            std::thread::spawn(move || {
                for _ in 0..10 {
                    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
                    s.set_read_timeout(Some(TIMEOUT)).unwrap();
                    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                        .unwrap();
                    assert_eq!(read_reply(&mut s).status, 200);
                }
            })
        })
        .collect();
    for w in workers {
        w.join().expect("worker");
    }
    // The slow client finishes eventually and is answered.
    slow.write_all(b"ter HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .unwrap();
    assert_eq!(read_reply(&mut slow).status, 200);
    // The lazy readers still get complete responses.
    for mut s in lazy {
        let reply = read_reply(&mut s);
        assert_eq!(reply.status, 200);
        reply.json();
    }
    drop(idle);
    let clients = r.read_number("http.clients");
    assert!(clients >= 1.0);
}

#[test]
fn idle_connections_time_out() {
    let r = Running::start(
        "src :: RatedSource(RATE 100) -> Discard;
         http :: HTTPServer(0, TIMEOUT 0.3);",
    );
    let mut s = r.connect();
    s.write_all(b"GET /").unwrap();
    let mut buf = Vec::new();
    let t0 = Instant::now();
    let _ = s.read_to_end(&mut buf);
    assert!(buf.is_empty());
    assert!(t0.elapsed() < Duration::from_secs(5));
}

#[test]
fn hot_swap_keeps_serving() {
    let r = Running::start_opts(TRAFFIC, true);
    let gen0 = r.get("/api/router").json()["generation"].clone();
    let new_config = "src :: RatedSource(RATE 2000) -> c :: Counter -> q :: Queue(1000)
        -> u :: RatedUnqueue(RATE 1000) -> d :: Discard; http :: HTTPServer(0);
        extra :: Counter;";
    // Same name and configured address: the successor takes the socket.
    // A configuration that fails keeps the old router, with the errors.
    let reply = r.post("/api/handler/hotconfig", new_config);
    assert_eq!(reply.status, 400);
    assert!(reply.error().contains("input 0 unused"), "{}", reply.text());
    assert_eq!(r.get("/api/router").json()["generation"], gen0);
    let new_config = new_config.replace("extra :: Counter", "extra :: AddressInfo(x 10.0.0.1)");
    let reply = r.post("/api/handler/hotconfig", &new_config);
    assert_eq!(reply.status, 200, "{}", reply.text());
    let j = r.get("/api/router").json();
    assert_ne!(j["generation"], gen0);
    assert!(j["elements"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["name"] == "extra"));
}

#[test]
fn bad_configurations() {
    for (conf, msg) in [
        ("HTTPServer(example.com:80)", "bad host"),
        ("HTTPServer(70000)", "ADDR"),
        ("HTTPServer(8080, TIMEOUT 0)", "TIMEOUT"),
        ("HTTPServer()", "ADDR"),
    ] {
        let err = config_errors_with(conf, &RouterOptions::default());
        assert!(err.contains(msg), "{conf}: {err}");
    }
}

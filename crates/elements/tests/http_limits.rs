//! HTTPServer against hostile clients and for the right writers (issue 13,
//! items 9 and 10, and "who may write"): slowloris connections cannot hold
//! every slot, a head has a deadline, one address cannot take every slot,
//! legitimate clients still get in; writes need the token, the page's own
//! origin is accepted under `localhost` and `127.0.0.1`, and a server
//! without a token is read-only.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpStream};
use std::os::fd::FromRawFd;
use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

use rclick_core::RouterOptions;
use rclick_elements::testing::{config_errors_with, RouterThread};

const TIMEOUT: Duration = Duration::from_secs(10);

fn token_path(tag: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!(
        "rclick-http-limits-{tag}-{}.token",
        std::process::id()
    ))
}

fn start(config: &str, hotswap: bool) -> RouterThread {
    let opts = RouterOptions {
        hotswap,
        capture_chatter: true,
        ..Default::default()
    };
    RouterThread::start(config, opts, "http.port", TIMEOUT)
}

fn connect(port: u16) -> TcpStream {
    let s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(TIMEOUT)).unwrap();
    s.set_write_timeout(Some(TIMEOUT)).unwrap();
    s
}

/// A connection to 127.0.0.1:port from source address `src`.
fn connect_from(src: Ipv4Addr, port: u16) -> TcpStream {
    // SAFETY: plain socket calls on a descriptor this function owns; the
    // addresses are valid sockaddr_in values of the size given.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0);
        assert!(fd >= 0);
        let sa = |ip: Ipv4Addr, p: u16| libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: p.to_be(),
            sin_addr: libc::in_addr {
                s_addr: u32::from(ip).to_be(),
            },
            sin_zero: [0; 8],
        };
        let me = sa(src, 0);
        let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        assert_eq!(
            libc::bind(fd, (&me as *const libc::sockaddr_in).cast(), len),
            0
        );
        let to = sa(Ipv4Addr::LOCALHOST, port);
        assert_eq!(
            libc::connect(fd, (&to as *const libc::sockaddr_in).cast(), len),
            0
        );
        let s = TcpStream::from_raw_fd(fd);
        s.set_read_timeout(Some(TIMEOUT)).unwrap();
        s
    }
}

/// A connection to 127.0.0.1:port with a small receive buffer, as a client
/// that reads slowly or never.
fn connect_small_window(port: u16) -> TcpStream {
    // SAFETY: as in connect_from; the option value is a valid c_int.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0);
        assert!(fd >= 0);
        let size: libc::c_int = 4096;
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_RCVBUF,
            (&size as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
        let to = libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: port.to_be(),
            sin_addr: libc::in_addr {
                s_addr: u32::from(Ipv4Addr::LOCALHOST).to_be(),
            },
            sin_zero: [0; 8],
        };
        let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        assert_eq!(
            libc::connect(fd, (&to as *const libc::sockaddr_in).cast(), len),
            0
        );
        let s = TcpStream::from_raw_fd(fd);
        s.set_read_timeout(Some(TIMEOUT)).unwrap();
        s
    }
}

#[test]
fn responses_to_slow_readers_are_bounded_in_total() {
    let r = start(
        &format!(
            "{} http :: HTTPServer(0, MAX_OUTPUT 4000000);",
            big_description()
        ),
        false,
    );
    let port = r.port;
    let (st, desc) = get(port, "/api/router");
    let size = desc.len();
    assert_eq!(st, 200, "{desc}");
    assert!(size > 2_000_000, "router description of {size} bytes");
    // Clients that ask for it and do not read.
    let mut lazy: Vec<TcpStream> = (0..6)
        .map(|_| {
            let mut s = connect_small_window(port);
            s.write_all(b"GET /api/router HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                .unwrap();
            s
        })
        .collect();
    wait_answered(port, 1 + lazy.len() as u64);
    let refused: u64 = read_value(port, "http.refused_responses").parse().unwrap();
    assert!(refused > 0, "every response of {size} bytes was queued");
    assert!((refused as usize) < lazy.len());
    // Each gets a whole answer: the description, or 503 saying why.
    let (mut ok, mut busy) = (0, 0);
    for s in &mut lazy {
        let (status, body) = response(s);
        match status {
            200 => {
                assert_eq!(body.len(), size);
                ok += 1;
            }
            503 => {
                assert!(body.contains("MAX_OUTPUT"), "{body}");
                busy += 1;
            }
            _ => panic!("status {status}: {body}"),
        }
    }
    assert!(ok > 0 && busy > 0, "{ok} ok, {busy} refused");
}

/// Waits until the server has answered `n` requests besides these polls
/// (made from 127.0.0.3, so as not to count against 127.0.0.1's limit).
fn wait_answered(port: u16, n: u64) {
    let start = Instant::now();
    for polls in 0.. {
        let mut s = connect_from(Ipv4Addr::new(127, 0, 0, 3), port);
        s.write_all(b"GET /api/handler/http.requests HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            .unwrap();
        let (status, body) = response(&mut s);
        assert_eq!(status, 200, "{body}");
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        let answered: u64 = v["value"].as_str().unwrap().trim().parse().unwrap();
        if answered >= n + polls {
            return;
        }
        assert!(start.elapsed() < TIMEOUT, "{answered} answered, want {n}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Status and body of the response on `s` (read to the end).
fn response(s: &mut TcpStream) -> (u16, String) {
    let mut buf = Vec::new();
    let _ = s.read_to_end(&mut buf);
    let text = String::from_utf8_lossy(&buf).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_string();
    (status, body)
}

fn request(port: u16, req: &str) -> (u16, String) {
    let mut s = connect(port);
    s.write_all(req.as_bytes()).unwrap();
    response(&mut s)
}

fn get(port: u16, path: &str) -> (u16, String) {
    request(
        port,
        &format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n"),
    )
}

fn read_value(port: u16, h: &str) -> String {
    let (status, body) = get(port, &format!("/api/handler/{h}"));
    assert_eq!(status, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    v["value"].as_str().unwrap().trim().to_string()
}

fn post(port: u16, h: &str, body: &str, extra: &str) -> (u16, String) {
    request(
        port,
        &format!(
            "POST /api/handler/{h} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{extra}\
             Content-Length: {}\r\n\r\n{body}",
            body.len()
        ),
    )
}

/// Slowloris connections: each sends the start of a head, then one header
/// line every `every` until told to stop.
fn slowloris(port: u16, n: usize) -> Vec<TcpStream> {
    (0..n)
        .map(|_| {
            let mut s = connect(port);
            s.write_all(b"GET / HTTP/1.1\r\nX-a: b\r\n").unwrap();
            s
        })
        .collect()
}

fn drip(conns: &mut [TcpStream]) {
    for s in conns.iter_mut() {
        let _ = s.write_all(b"X-a: b\r\n");
    }
}

#[test]
fn slowloris_cannot_hold_the_slots_and_heads_have_a_deadline() {
    let r = start(
        "Idle -> c :: Counter -> Discard;
         http :: HTTPServer(0, MAX_CLIENTS 8, HEAD_TIMEOUT 0.8);",
        false,
    );
    let port = r.port;
    let mut slow = slowloris(port, 8);
    // Every slot is held; a client with a whole request still gets in.
    let t0 = Instant::now();
    for _ in 0..5 {
        drip(&mut slow);
        assert_eq!(read_value(port, "c.count"), "0");
    }
    assert!(t0.elapsed() < Duration::from_secs(3));
    assert!(read_value(port, "http.evicted").parse::<u64>().unwrap() >= 1);
    // Dripping keeps a connection busy but not past HEAD_TIMEOUT.
    let mut last = slowloris(port, 1).pop().unwrap();
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_millis(2500) {
        if last.write_all(b"X-a: b\r\n").is_err() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    last.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
    let (status, body) = response(&mut last);
    assert_eq!(status, 408, "{body}");
    assert!(body.contains("HEAD_TIMEOUT"));
    assert!(t0.elapsed() < Duration::from_millis(2500));
    assert!(
        read_value(port, "http.head_timeouts")
            .parse::<u64>()
            .unwrap()
            >= 1
    );
}

/// Issue 13 item 9 at its scale, with default limits: 300 slowloris
/// connections, then a browser.
#[test]
fn three_hundred_slowloris_connections_at_the_defaults() {
    let r = start(
        "Idle -> c :: Counter -> Discard; http :: HTTPServer(0);",
        false,
    );
    let port = r.port;
    let mut slow = slowloris(port, 300);
    drip(&mut slow);
    let t0 = Instant::now();
    for _ in 0..10 {
        assert_eq!(read_value(port, "c.count"), "0");
    }
    assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
    // One address holds at most MAX_PER_ADDRESS (64) of them.
    let clients: usize = read_value(port, "http.clients").parse().unwrap();
    assert!(clients <= 65, "{clients} connections open");
}

#[test]
fn an_unwritable_token_file_is_an_error() {
    let err = config_errors_with(
        "HTTPServer(0, TOKEN_FILE /nonexistent-dir/x.token)",
        &RouterOptions::default(),
    );
    assert!(err.contains("TOKEN_FILE /nonexistent-dir/x.token"), "{err}");
}

/// A configuration whose `/api/router` is about 3 MB: more than the
/// kernel takes for a client that does not read.
fn big_description() -> String {
    let long = "n".repeat(10000);
    let chain: String = (0..100)
        .map(|i| format!("-> c{i}_{long} :: Counter "))
        .collect();
    format!("Idle {chain}-> Discard;")
}

#[test]
fn per_address_limit_refuses_with_503_and_others_get_in() {
    let r = start(
        &format!(
            "{} http :: HTTPServer(0, MAX_PER_ADDRESS 4);",
            big_description()
        ),
        false,
    );
    let port = r.port;
    // A slow body and an answered request are closed to make room.
    let mut slow_body = connect(port);
    slow_body
        .write_all(
            b"POST /api/handler/stop HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n1",
        )
        .unwrap();
    // Four clients that are being sent a big response and do not read it:
    // those are never closed to make room.
    let held: Vec<TcpStream> = (0..4)
        .map(|_| {
            let mut s = connect_small_window(port);
            s.write_all(b"GET /api/router HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                .unwrap();
            s
        })
        .collect();
    // All four are being answered.
    wait_answered(port, 4);
    let (status, body) = response(&mut slow_body);
    assert_eq!(status, 0, "the slow body was answered: {body}");
    let (status, body) = get(port, "/api/handler/http.clients");
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("too many connections"));
    // Another address is served.
    let mut other = connect_from(Ipv4Addr::new(127, 0, 0, 2), port);
    other
        .write_all(b"GET /api/handler/http.refused HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .unwrap();
    let (status, body) = response(&mut other);
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"value\":\"1\""), "{body}");
    drop(held);
}

#[test]
fn without_a_token_the_server_is_read_only() {
    let r = start(
        "Idle -> q :: Queue -> Discard; http :: HTTPServer(0);",
        false,
    );
    let port = r.port;
    // Before: any local process could write with no Origin header.
    let (status, body) = post(port, "q.capacity", "5", "");
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("writes need a token"), "{body}");
    assert_eq!(read_value(port, "q.capacity"), "1000");
    assert_eq!(read_value(port, "http.writable"), "false");
    let err = config_errors_with("HTTPServer(0, READONLY false)", &RouterOptions::default());
    assert!(err.contains("READONLY false needs TOKEN_FILE"), "{err}");
}

#[test]
fn writes_need_the_token_and_the_pages_origin_is_accepted() {
    let path = token_path("origin");
    let r = start(
        &format!(
            "Idle -> q :: Queue -> Discard;
             http :: HTTPServer(0, TOKEN_FILE {}, VERBOSE true);",
            path.display()
        ),
        false,
    );
    let port = r.port;
    let md = std::fs::metadata(&path).unwrap();
    assert_eq!(md.permissions().mode() & 0o777, 0o600);
    let token = std::fs::read_to_string(&path).unwrap().trim().to_string();
    assert_eq!(token.len(), 64);
    assert!(token.bytes().all(|b| b.is_ascii_hexdigit()));
    let bearer = format!("Authorization: Bearer {token}\r\n");
    // No token, a wrong one: 401.
    let (status, body) = post(port, "q.capacity", "5", "");
    assert_eq!(status, 401, "{body}");
    let wrong = format!("Authorization: Bearer {}0\r\n", &token[1..]);
    assert_eq!(post(port, "q.capacity", "5", &wrong).0, 401);
    assert_eq!(
        post(port, "q.capacity", "5", "Authorization: Basic eDp5\r\n").0,
        401
    );
    assert_eq!(read_value(port, "q.capacity"), "1000");
    // The token: 200.
    assert_eq!(post(port, "q.capacity", "6", &bearer).0, 200);
    assert_eq!(read_value(port, "q.capacity"), "6");
    // The page opened at http://localhost:PORT (issue 13 item 10), and at
    // 127.0.0.1 posting under the other name.
    for (host, origin) in [
        (
            format!("localhost:{port}"),
            format!("http://localhost:{port}"),
        ),
        (
            format!("127.0.0.1:{port}"),
            format!("http://127.0.0.1:{port}"),
        ),
        (
            format!("127.0.0.1:{port}"),
            format!("http://localhost:{port}"),
        ),
        (
            format!("LocalHost:{port}"),
            format!("http://localhost:{port}/"),
        ),
        (format!("[::1]:{port}"), format!("http://[::1]:{port}")),
    ] {
        let (status, body) = request(
            port,
            &format!(
                "POST /api/handler/q.capacity HTTP/1.1\r\nHost: {host}\r\nOrigin: {origin}\r\n\
                 {bearer}Content-Length: 2\r\n\r\n77"
            ),
        );
        assert_eq!(status, 200, "Host {host}, Origin {origin}: {body}");
    }
    // Other sites, other ports, opaque origins: 403 even with the token.
    for origin in [
        "http://evil.example".to_string(),
        format!("http://evil.example:{port}"),
        format!("http://localhost:{}", port.wrapping_add(1)),
        "null".to_string(),
        format!("https://localhost:{port}"),
    ] {
        let (status, body) = request(
            port,
            &format!(
                "POST /api/handler/q.capacity HTTP/1.1\r\nHost: localhost:{port}\r\n\
                 Origin: {origin}\r\n{bearer}Content-Length: 1\r\n\r\n9"
            ),
        );
        assert_eq!(status, 403, "Origin {origin}: {body}");
    }
    assert_eq!(read_value(port, "q.capacity"), "77");
    assert_eq!(read_value(port, "http.writable"), "true");
    // The printed URL carries the token in its fragment; the readable
    // `url` handler does not.
    assert!(!read_value(port, "http.url").contains(&token));
    let chatter = r.finish();
    assert!(
        chatter
            .iter()
            .any(|l| l.contains(&format!("/#token={token}"))),
        "{chatter:?}"
    );
    let _ = std::fs::remove_file(path);
}

#[test]
fn hot_swap_keeps_the_token() {
    let path = token_path("swap");
    let config = format!(
        "Idle -> q :: Queue -> Discard; http :: HTTPServer(0, TOKEN_FILE {});",
        path.display()
    );
    let r = start(&config, true);
    let port = r.port;
    let token = std::fs::read_to_string(&path).unwrap().trim().to_string();
    let bearer = format!("Authorization: Bearer {token}\r\n");
    let new = config.replace("Queue", "Queue(55)");
    let (status, body) = post(port, "hotconfig", &new, &bearer);
    assert_eq!(status, 200, "{body}");
    assert_eq!(read_value(port, "q.capacity"), "55");
    assert_eq!(std::fs::read_to_string(&path).unwrap().trim(), token);
    assert_eq!(post(port, "q.capacity", "66", &bearer).0, 200);
    let _ = std::fs::remove_file(path);
}

#[test]
fn bad_limits() {
    for (conf, msg) in [
        (
            "HTTPServer(0, HEAD_TIMEOUT 0)",
            "HEAD_TIMEOUT must be positive",
        ),
        ("HTTPServer(0, MAX_CLIENTS 0)", "must be positive"),
        ("HTTPServer(0, MAX_PER_ADDRESS 0)", "must be positive"),
    ] {
        let err = config_errors_with(conf, &RouterOptions::default());
        assert!(err.contains(msg), "{conf}: {err}");
    }
}

/// An HTTPServer that a hot swap adds (no predecessor hands it a listener
/// or a token) makes its token as one started with the router does: the
/// file is written and writes carrying it are accepted. Before, it bound
/// its port, said `writable` true, and refused every write with 401.
#[test]
fn an_http_server_added_by_hot_swap_makes_its_token() {
    let path = token_path("added-a");
    let added = token_path("added-b");
    let _ = std::fs::remove_file(&added);
    let config = format!(
        "Idle -> q :: Queue -> Discard; http :: HTTPServer(0, TOKEN_FILE {});",
        path.display()
    );
    let r = start(&config, true);
    let port = r.port;
    let token = std::fs::read_to_string(&path).unwrap().trim().to_string();
    let bearer = format!("Authorization: Bearer {token}\r\n");
    let new = format!(
        "{config} web :: HTTPServer(0, TOKEN_FILE {});",
        added.display()
    );
    let (status, body) = post(port, "hotconfig", &new, &bearer);
    assert_eq!(status, 200, "{body}");
    // The new server binds on its timer, and writes its token then.
    let start = Instant::now();
    let web = loop {
        let p: u16 = read_value(port, "web.port").parse().unwrap();
        if p != 0 {
            break p;
        }
        assert!(start.elapsed() < TIMEOUT, "web never bound");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(added.exists(), "{} not written", added.display());
    let md = std::fs::metadata(&added).unwrap();
    assert_eq!(md.permissions().mode() & 0o777, 0o600);
    let token2 = std::fs::read_to_string(&added).unwrap().trim().to_string();
    assert_eq!(token2.len(), 64);
    assert_ne!(token2, token);
    let bearer2 = format!("Authorization: Bearer {token2}\r\n");
    let (status, body) = post(web, "q.capacity", "44", &bearer2);
    assert_eq!(status, 200, "{body}");
    assert_eq!(read_value(port, "q.capacity"), "44");
    // The first server's token is not the new one's.
    assert_eq!(post(web, "q.capacity", "45", &bearer).0, 401);
    let _ = std::fs::remove_file(path);
    let _ = std::fs::remove_file(added);
}

/// Under simulated time (whose clock jumps to the next timer) the
/// timeouts are not applied: a head finished after HEAD_TIMEOUT of real
/// time is still answered. With the timer armed there, it would fire at
/// once, again and again, and the real-time deadline would close the
/// connection with 408.
#[test]
fn simulated_time_does_not_cut_off_clients() {
    let opts = RouterOptions {
        simtime: Some(rclick_core::time::DEFAULT_SIMTIME_START),
        capture_chatter: true,
        ..Default::default()
    };
    let r = RouterThread::start(
        "Idle -> c :: Counter -> Discard;
         http :: HTTPServer(0, HEAD_TIMEOUT 0.3, TIMEOUT 0.3);",
        opts,
        "http.port",
        TIMEOUT,
    );
    let mut s = connect(r.port);
    s.write_all(b"GET /api/handler/c.count HTTP/1.1\r\n")
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    s.write_all(b"Host: 127.0.0.1\r\n\r\n").unwrap();
    let (status, body) = response(&mut s);
    assert_eq!(status, 200, "{body}");
    assert_eq!(read_value(r.port, "http.head_timeouts"), "0");
}

//! `rclick call`: reads or writes one handler of a running router through
//! its ControlSocket (protocol 1.3), for scripts and the shell.
//!
//! Exit status: 0 success, 1 the router answered with an error (message on
//! standard error), 2 connection or protocol trouble.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::fs::FileTypeExt;
use std::os::unix::net::UnixStream;
use std::time::Duration;

const DEFAULT_ADDRESS: &str = "127.0.0.1:7777";

pub fn usage(prog: &str) -> String {
    format!(
        "'{prog} call' calls a handler of a running router through its control socket\n\
         (a ControlSocket element, or the driver's -p/-u options).\n\n\
         Usage: {prog} call [ADDRESS] ELEMENT.HANDLER [VALUE]\n\n\
         Without VALUE, reads the handler and prints its value (a newline is added if\n\
         missing). With VALUE, writes it; VALUE '-' is read from standard input.\n\
         Global handlers are named HANDLER or .HANDLER.\n\n\
         ADDRESS is HOST:PORT, PORT (on 127.0.0.1), or the path of a Unix socket\n\
         (starting with '/' or '.', or an existing socket). Default: $RCLICK_CONTROL,\n\
         else {DEFAULT_ADDRESS}.\n\n\
         Options:\n  \
         -t, --timeout SECS   Give up after SECS seconds (default 30).\n  \
         -s, --secret-file FILE  The socket requires AUTH (ControlSocket SECRET_FILE,\n                       \
         rclick --control-secret): send FILE's first line. Default:\n                       \
         $RCLICK_CONTROL_SECRET_FILE.\n      \
         --help           Print this message and exit.\n\n\
         Exit status: 0 success; 1 the handler call failed (the router's message is\n\
         printed on standard error); 2 connection or protocol error.\n"
    )
}

enum Addr {
    Tcp(String),
    Unix(String),
}

/// Whether a command-line word names a control socket address rather than
/// a handler.
fn looks_like_address(a: &str) -> bool {
    if a.starts_with('/') || a.starts_with("./") || a.starts_with("../") {
        return true;
    }
    if !a.is_empty() && a.bytes().all(|b| b.is_ascii_digit()) {
        return true;
    }
    if let Some((host, port)) = a.rsplit_once(':') {
        if !host.is_empty() && !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) {
            return true;
        }
    }
    std::fs::metadata(a).is_ok_and(|m| m.file_type().is_socket())
}

fn parse_addr(a: &str) -> Addr {
    if !a.is_empty() && a.bytes().all(|b| b.is_ascii_digit()) {
        return Addr::Tcp(format!("127.0.0.1:{a}"));
    }
    match a.rsplit_once(':') {
        Some((h, p))
            if !h.is_empty()
                && !h.contains('/')
                && !p.is_empty()
                && p.bytes().all(|b| b.is_ascii_digit()) =>
        {
            Addr::Tcp(a.to_string())
        }
        _ => Addr::Unix(a.to_string()),
    }
}

/// Something went wrong: exit status and message.
struct Failure(u8, String);

trait Conn: Read + Write {}
impl<T: Read + Write> Conn for T {}

struct Client {
    r: BufReader<Box<dyn Conn>>,
}

impl Client {
    fn connect(addr: &Addr, timeout: Duration) -> Result<Client, Failure> {
        let stream: Box<dyn Conn> = match addr {
            Addr::Tcp(a) => {
                let addrs: Vec<std::net::SocketAddr> = std::net::ToSocketAddrs::to_socket_addrs(a)
                    .map_err(|e| Failure(2, format!("{a}: {e}")))?
                    .collect();
                let mut last = None;
                let mut stream = None;
                for sa in addrs {
                    match TcpStream::connect_timeout(&sa, timeout) {
                        Ok(s) => {
                            stream = Some(s);
                            break;
                        }
                        Err(e) => last = Some(e),
                    }
                }
                let s = stream.ok_or_else(|| {
                    Failure(
                        2,
                        format!(
                            "{a}: {}",
                            last.map_or("no address".to_string(), |e| e.to_string())
                        ),
                    )
                })?;
                let _ = s.set_read_timeout(Some(timeout));
                let _ = s.set_write_timeout(Some(timeout));
                let _ = s.set_nodelay(true);
                Box::new(s)
            }
            Addr::Unix(p) => {
                let s = UnixStream::connect(p).map_err(|e| Failure(2, format!("{p}: {e}")))?;
                let _ = s.set_read_timeout(Some(timeout));
                let _ = s.set_write_timeout(Some(timeout));
                Box::new(s)
            }
        };
        let mut c = Client {
            r: BufReader::new(stream),
        };
        let greeting = c.line()?;
        if !greeting.starts_with("Click::ControlSocket/") {
            return Err(Failure(2, format!("unexpected greeting '{greeting}'")));
        }
        Ok(c)
    }

    fn line(&mut self) -> Result<String, Failure> {
        let mut buf = Vec::new();
        let n = (&mut self.r)
            .take(1 << 20)
            .read_until(b'\n', &mut buf)
            .map_err(|e| Failure(2, format!("control socket: {e}")))?;
        if n == 0 {
            return Err(Failure(2, "control socket closed the connection".into()));
        }
        while buf.last().is_some_and(|&b| b == b'\n' || b == b'\r') {
            buf.pop();
        }
        Ok(String::from_utf8_lossy(&buf).into_owned())
    }

    fn send(&mut self, bytes: &[u8]) -> Result<(), Failure> {
        let w = self.r.get_mut();
        w.write_all(bytes)
            .and_then(|_| w.flush())
            .map_err(|e| Failure(2, format!("control socket: {e}")))
    }

    /// Reads one reply: code and message lines.
    fn reply(&mut self) -> Result<(u16, Vec<String>), Failure> {
        let mut msgs = Vec::new();
        loop {
            let l = self.line()?;
            let code = l
                .get(..3)
                .and_then(|c| c.parse::<u16>().ok())
                .filter(|_| matches!(l.as_bytes().get(3), Some(b' ' | b'-') | None));
            let Some(code) = code else {
                return Err(Failure(2, format!("malformed reply '{l}'")));
            };
            msgs.push(l.get(4..).unwrap_or("").to_string());
            if l.as_bytes().get(3) != Some(&b'-') {
                return Ok((code, msgs));
            }
        }
    }

    fn data(&mut self) -> Result<Vec<u8>, Failure> {
        let l = self.line()?;
        let n = l
            .strip_prefix("DATA ")
            .and_then(|n| n.trim().parse::<usize>().ok())
            .ok_or_else(|| Failure(2, format!("expected DATA, got '{l}'")))?;
        let mut buf = vec![0u8; n];
        self.r
            .read_exact(&mut buf)
            .map_err(|e| Failure(2, format!("control socket: {e}")))?;
        Ok(buf)
    }
}

/// Error replies: the message lines without the generic first line when
/// there are details.
fn failure(msgs: Vec<String>) -> Failure {
    let text = if msgs.len() > 1 {
        msgs[1..].join("\n")
    } else {
        msgs.join("\n")
    };
    Failure(1, text)
}

/// The secret in `path`: its first line without whitespace.
fn read_secret(path: &str) -> Result<String, Failure> {
    let text = std::fs::read_to_string(path).map_err(|e| Failure(2, format!("{path}: {e}")))?;
    let s: String = text
        .lines()
        .next()
        .unwrap_or("")
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    if s.is_empty() {
        return Err(Failure(2, format!("{path}: no secret in the file")));
    }
    Ok(s)
}

fn run(
    addr: &Addr,
    handler: &str,
    value: Option<Vec<u8>>,
    timeout: Duration,
    secret: Option<&str>,
) -> Result<(), Failure> {
    let mut c = Client::connect(addr, timeout)?;
    if let Some(secret) = secret {
        c.send(format!("AUTH {secret}\r\n").as_bytes())?;
        let (code, msgs) = c.reply()?;
        if !(200..300).contains(&code) {
            return Err(failure(msgs));
        }
    }
    match value {
        None => {
            c.send(format!("READ {handler}\r\n").as_bytes())?;
            let (code, msgs) = c.reply()?;
            if !(200..300).contains(&code) {
                return Err(failure(msgs));
            }
            let mut data = c.data()?;
            if !data.is_empty() && data.last() != Some(&b'\n') {
                data.push(b'\n');
            }
            let mut out = std::io::stdout().lock();
            out.write_all(&data)
                .and_then(|_| out.flush())
                .map_err(|e| Failure(2, format!("stdout: {e}")))?;
        }
        Some(v) => {
            let mut cmd = format!("WRITEDATA {handler} {}\r\n", v.len()).into_bytes();
            cmd.extend_from_slice(&v);
            c.send(&cmd)?;
            let (code, msgs) = c.reply()?;
            if !(200..300).contains(&code) {
                return Err(failure(msgs));
            }
        }
    }
    let _ = c.send(b"QUIT\r\n");
    Ok(())
}

/// Entry point of `rclick call`; returns the exit status.
pub fn main(prog: &str, args: &[String]) -> u8 {
    let mut timeout = Duration::from_secs(30);
    let mut secret_file: Option<String> = std::env::var("RCLICK_CONTROL_SECRET_FILE")
        .ok()
        .filter(|s| !s.is_empty());
    let mut pos: Vec<String> = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        match a.as_str() {
            "--help" => {
                print!("{}", usage(prog));
                return 0;
            }
            "-t" | "--timeout" => {
                i += 1;
                match args.get(i).and_then(|t| t.parse::<f64>().ok()) {
                    Some(t) if t > 0.0 && t.is_finite() => timeout = Duration::from_secs_f64(t),
                    _ => {
                        eprintln!("{prog} call: '--timeout' expects a positive number");
                        return 2;
                    }
                }
            }
            "-s" | "--secret-file" => {
                i += 1;
                match args.get(i) {
                    Some(f) => secret_file = Some(f.clone()),
                    None => {
                        eprintln!("{prog} call: '--secret-file' requires a file");
                        return 2;
                    }
                }
            }
            "--" => {
                pos.extend(args[i + 1..].iter().cloned());
                break;
            }
            _ => pos.push(a.clone()),
        }
        i += 1;
    }
    let (addr, rest) = match pos.len() {
        0 => {
            eprintln!("{prog} call: handler name missing");
            eprintln!("Usage: {prog} call [ADDRESS] ELEMENT.HANDLER [VALUE]");
            return 2;
        }
        1 => (None, &pos[..]),
        2 if looks_like_address(&pos[0]) => (Some(pos[0].clone()), &pos[1..]),
        2 => (None, &pos[..]),
        3 => (Some(pos[0].clone()), &pos[1..]),
        _ => {
            eprintln!("{prog} call: too many arguments");
            eprintln!("Usage: {prog} call [ADDRESS] ELEMENT.HANDLER [VALUE]");
            return 2;
        }
    };
    let addr = addr
        .or_else(|| {
            std::env::var("RCLICK_CONTROL")
                .ok()
                .filter(|s| !s.is_empty())
        })
        .unwrap_or_else(|| DEFAULT_ADDRESS.to_string());
    let handler = &rest[0];
    if handler.is_empty() || handler.bytes().any(|b| b.is_ascii_whitespace()) {
        eprintln!("{prog} call: bad handler name '{handler}'");
        return 2;
    }
    let value = match rest.get(1) {
        None => None,
        Some(v) if v == "-" => {
            let mut buf = Vec::new();
            if let Err(e) = std::io::stdin().read_to_end(&mut buf) {
                eprintln!("{prog} call: stdin: {e}");
                return 2;
            }
            Some(buf)
        }
        Some(v) => Some(v.clone().into_bytes()),
    };
    let secret = match secret_file.as_deref().map(read_secret).transpose() {
        Ok(s) => s,
        Err(Failure(code, msg)) => {
            eprintln!("{prog} call: {msg}");
            return code;
        }
    };
    match run(
        &parse_addr(&addr),
        handler,
        value,
        timeout,
        secret.as_deref(),
    ) {
        Ok(()) => 0,
        Err(Failure(code, msg)) => {
            if code == 1 {
                eprintln!("{msg}");
            } else {
                eprintln!("{prog} call: {msg}");
            }
            code
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses() {
        assert!(looks_like_address("7777"));
        assert!(looks_like_address("localhost:7777"));
        assert!(looks_like_address("/tmp/x.sock"));
        assert!(looks_like_address("./x.sock"));
        assert!(!looks_like_address("c.count"));
        assert!(!looks_like_address("3.count"));
        assert!(!looks_like_address(".version"));
        assert!(matches!(parse_addr("7777"), Addr::Tcp(a) if a == "127.0.0.1:7777"));
        assert!(matches!(parse_addr("h:1"), Addr::Tcp(a) if a == "h:1"));
        assert!(matches!(parse_addr("/tmp/a:1"), Addr::Unix(_)));
    }
}

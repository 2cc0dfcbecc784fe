//! RandomSeed in a configuration installed by hot swap over the
//! ControlSocket: the new router is built on a thread of its own, and the
//! seed must reach the generator the running router draws from.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use rclick_core::{Router, RouterOptions};

const TIMEOUT: Duration = Duration::from_secs(60);
/// glibc's first outputs after `srandom(1)`.
const SEED1: [&str; 3] = ["1804289383", "846930886", "1681692777"];

struct Running {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    port: u16,
}

impl Running {
    fn start(text: String) -> Running {
        let (tx, rx) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            let reg = rclick_elements::registry();
            let opts = RouterOptions {
                hotswap: true,
                capture_chatter: true,
                ..Default::default()
            };
            let outcome = rclick_lang::parse_router(&text, "test", &reg, &opts.parse);
            let spec = outcome.spec.expect("configuration parses");
            let mut router = Router::new(spec, &text, &reg, &opts)
                .unwrap_or_else(|e| panic!("router failed: {e:?}"));
            let port = router
                .read_handler("cs.port", None)
                .expect("port handler")
                .trim()
                .parse::<u16>()
                .expect("port");
            tx.send((router.stop_flag(), port)).unwrap();
            router.run();
            router.cleanup();
        });
        let (stop, port) = rx.recv_timeout(TIMEOUT).expect("router thread");
        Running {
            stop,
            thread: Some(thread),
            port,
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

struct Client(BufReader<TcpStream>);

impl Client {
    fn connect(port: u16) -> Client {
        let s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        s.set_read_timeout(Some(TIMEOUT)).unwrap();
        let mut c = Client(BufReader::new(s));
        assert_eq!(c.line(), "Click::ControlSocket/1.3");
        c
    }

    fn line(&mut self) -> String {
        let mut buf = String::new();
        self.0.read_line(&mut buf).expect("read line");
        buf.trim_end().to_string()
    }

    fn read(&mut self, h: &str) -> String {
        self.0
            .get_mut()
            .write_all(format!("READ {h}\r\n").as_bytes())
            .unwrap();
        assert_eq!(self.line(), format!("200 Read handler '{h}' OK"));
        let l = self.line();
        let n: usize = l.strip_prefix("DATA ").unwrap().parse().unwrap();
        let mut buf = vec![0; n];
        self.0.read_exact(&mut buf).unwrap();
        String::from_utf8(buf).unwrap()
    }

    fn hotconfig(&mut self, text: &str) {
        let mut msg = format!("WRITEDATA hotconfig {}\r\n", text.len()).into_bytes();
        msg.extend_from_slice(text.as_bytes());
        self.0.get_mut().write_all(&msg).unwrap();
        assert_eq!(self.line(), "200 Write handler 'hotconfig' OK");
    }
}

fn base_port() -> u16 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    20000 + ((nanos ^ std::process::id().wrapping_mul(2_654_435_761)) % 30000) as u16
}

/// Click seeds the process's generator when the new configuration's
/// RandomSeed is configured; rclick builds the new router on another
/// thread, and seeded that thread's generator, so the running router's
/// draws went on from where they were.
#[test]
fn a_hot_swapped_random_seed_reseeds_the_running_generator() {
    let base = base_port();
    let conf = |seed: bool| {
        format!(
            "cs :: ControlSocket(TCP, {base}+); {} s :: Script(TYPE PASSIVE);",
            if seed { "RandomSeed(1);" } else { "" }
        )
    };
    let r = Running::start(conf(true));
    let mut c = Client::connect(r.port);
    assert_eq!(c.read("s.random"), SEED1[0]);
    assert_eq!(c.read("s.random"), SEED1[1]);
    // The successor's RandomSeed has a predecessor of its name.
    c.hotconfig(&conf(true));
    assert_eq!(c.read("s.random"), SEED1[0], "reseeded at the switch");
    // One without a RandomSeed leaves the generator going on; one whose
    // RandomSeed is new seeds when it is installed (its timer, due at once).
    c.hotconfig(&conf(false));
    assert_eq!(c.read("s.random"), SEED1[1]);
    c.hotconfig(&conf(true).replace("RandomSeed(1)", "n :: RandomSeed(1)"));
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(c.read("s.random"), SEED1[0], "reseeded once installed");
    assert_eq!(c.read("s.random"), SEED1[1]);
    assert_eq!(c.read("s.random"), SEED1[2]);
}

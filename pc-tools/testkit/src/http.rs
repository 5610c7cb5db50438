//! A tiny HTTP/1.1 server on 127.0.0.1 for offline tests: one connection at
//! a time, `Connection: close`, replies chosen by a closure, every request
//! recorded. Written by hand: it needs to misbehave on purpose (cut a body
//! short), which ready-made servers do not offer. The hub's tests and the
//! command's serve canned Hugging Face replies ([`crate::hf`]) with it.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// A request as the server saw it.
#[derive(Clone, Debug)]
pub struct Request {
    pub path: String,
    /// Header names lower-cased.
    pub headers: Vec<(String, String)>,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A reply. With `cut_after = Some(n)` the connection closes after n body
/// bytes although the headers announced more.
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub cut_after: Option<usize>,
}

impl Reply {
    pub fn json(body: &str) -> Reply {
        Reply {
            status: 200,
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: body.as_bytes().to_vec(),
            cut_after: None,
        }
    }
    pub fn status(status: u16) -> Reply {
        Reply {
            status,
            headers: vec![],
            body: format!("status {status}").into_bytes(),
            cut_after: None,
        }
    }
}

type Handler = dyn Fn(&Request) -> Reply + Send + Sync;

pub struct Server {
    pub base: String,
    pub requests: Arc<Mutex<Vec<Request>>>,
    stop: Arc<AtomicBool>,
    addr: std::net::SocketAddr,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    pub fn start(handler: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let handler: Arc<Handler> = Arc::new(handler);
        let (reqs, stop2) = (requests.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if stop2.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                serve(conn, &*handler, &reqs);
            }
        });
        Server {
            base: format!("http://{addr}"),
            requests,
            stop,
            addr,
            thread: Some(thread),
        }
    }

    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect(self.addr);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(conn: TcpStream, handler: &Handler, reqs: &Mutex<Vec<Request>>) {
    conn.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .ok();
    let mut reader = BufReader::new(conn.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 || h.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.push((k.trim().to_lowercase(), v.trim().to_string()));
        }
    }
    let req = Request { path, headers };
    reqs.lock().unwrap().push(req.clone());
    let reply = handler(&req);
    let mut out = conn;
    let mut head = format!("HTTP/1.1 {} X\r\n", reply.status);
    let has_len = reply
        .headers
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("content-length"));
    for (k, v) in &reply.headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    if !has_len {
        head.push_str(&format!("Content-Length: {}\r\n", reply.body.len()));
    }
    head.push_str("Connection: close\r\n\r\n");
    let _ = out.write_all(head.as_bytes());
    let n = reply
        .cut_after
        .unwrap_or(reply.body.len())
        .min(reply.body.len());
    let _ = out.write_all(&reply.body[..n]);
    let _ = out.flush();
    let _ = out.shutdown(std::net::Shutdown::Both);
}

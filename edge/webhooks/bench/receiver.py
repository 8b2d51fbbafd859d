"""bench-hooks-wrk's webhook receiver: answers every POST 200 and counts the requests and the
distinct webhook-id headers; GET /count answers "<requests> <distinct ids>". Usage:
receiver.py PORTFILE (writes the port it listens on there)."""
import http.server
import sys
import threading

count = 0
ids = set()
lock = threading.Lock()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        global count
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        with lock:
            count += 1
            ids.add(self.headers.get("webhook-id"))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self):
        with lock:
            body = f"{count} {len(ids)}".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class Server(http.server.ThreadingHTTPServer):
    request_queue_size = 256  # the default 5 resets connections under the delivery workers


srv = Server(("127.0.0.1", 0), Handler)
with open(sys.argv[1], "w") as f:
    f.write(str(srv.server_address[1]))
srv.serve_forever()

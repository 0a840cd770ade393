#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A misbehaving write endpoint on 127.0.0.1 for tests/service/test-hostile-upload.sh.

Usage: stub-server.py PORT LOGFILE [CERT KEY]   (CERT and KEY: serve HTTPS
with Python's ssl module, which is OpenSSL). The first path component picks
the answer:
  /echo/...   401 whose first line quotes what came in: the Authorization
              header, and the credentials decoded, percent-encoded (both
              cases, and as a form), JSON-escaped, base64 without padding
  /long/...   401 whose first line is 4,090 bytes of 'x' and then the header:
              the credentials straddle the 4,096 bytes scsitune keeps
  /evil/...   400 whose body is terminal escapes (clear screen, OSC title, BEL, C1 CSI)
  /ok/...     204; the body is appended to LOGFILE
"""
import base64
import http.server
import json
import re
import ssl
import sys
import urllib.parse


def forms(secret):
    """Every encoding the test expects scsitune to mask."""
    upper = urllib.parse.quote(secret, safe='')
    return [secret, upper, re.sub(r'%[0-9A-F]{2}', lambda m: m.group(0).lower(), upper),
            urllib.parse.quote_plus(secret), json.dumps(secret)[1:-1].replace('/', '\\/'),
            base64.b64encode(secret.encode()).decode(), base64.b64encode(secret.encode()).decode().rstrip('=')]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def log_message(self, fmt, *args):
        pass

    def answer(self, status, body):
        self.send_response(status)
        self.send_header('Content-Type', 'text/plain')
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        data = self.rfile.read(int(self.headers.get('Content-Length', 0)))
        mode = self.path.split('/')[1]
        auth = self.headers.get('Authorization', '')
        secrets = []
        if auth.startswith('Basic '):
            userpwd = base64.b64decode(auth[6:]).decode()
            secrets = [userpwd, userpwd.split(':', 1)[1]]
        elif ' ' in auth:
            secrets = [auth.split(' ', 1)[1]]
        if mode == 'echo':
            quoted = ' | '.join(f for s in secrets for f in forms(s))
            self.answer(401, ('unauthorized: Authorization: %s | %s\nsecond line\n' % (auth, quoted)).encode())
        elif mode == 'long':
            self.answer(401, ('x' * 4090 + auth + ' ' + ' '.join(secrets) + '\n').encode())
        elif mode == 'evil':
            self.answer(400, b'bad\x1b[2J\x1b]0;pwned\x07\xc2\x9b1m request\n')
        else:
            with open(sys.argv[2], 'ab') as f:
                f.write(data)
            self.answer(204, b'')


def main():
    server = http.server.ThreadingHTTPServer(('127.0.0.1', int(sys.argv[1])), Handler)
    if len(sys.argv) > 4:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(sys.argv[3], sys.argv[4])
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
    server.serve_forever()


main()

"""The total deadline and a cut-short answer over https (lakelet/commands/wire.py's TLSConnection, which reads
through http.client): a self-signed certificate made here, a server that trickles its answer a byte at a time,
and one that closes before the length it announced."""

from __future__ import annotations

import contextlib
import datetime
import ipaddress
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from lakelet.commands.api import Api
from lakelet.commands.errors import CLIError
from lakelet.commands.settings import Settings
from tests.clocks import ENDED_WITHIN_SECONDS, raised_within


def _certificate(folder: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_path, key_path


Answer = Callable[[ssl.SSLSocket, threading.Event], None]


@pytest.fixture
def tls_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[Answer], Api]]:
    """``serve(answer)``: a TLS server on a free port answering each connection with ``answer``; an Api for it
    that trusts the server's certificate."""
    cert, key = _certificate(tmp_path)
    server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_context.load_cert_chain(cert, key)
    client_context = ssl.create_default_context(cafile=str(cert))
    monkeypatch.setattr(ssl, "create_default_context", lambda *a, **k: client_context)
    stop = threading.Event()
    listeners: list[socket.socket] = []

    def serve(answer: Answer) -> Api:
        listener = socket.create_server(("127.0.0.1", 0))
        listeners.append(listener)

        def accept() -> None:
            with contextlib.suppress(OSError):
                conn, _ = listener.accept()
                with server_context.wrap_socket(conn, server_side=True) as tls:
                    tls.recv(65536)
                    answer(tls, stop)

        threading.Thread(target=accept, daemon=True).start()
        return Api(Settings(f"https://127.0.0.1:{listener.getsockname()[1]}", "key", "secret", "test"))

    yield serve
    stop.set()
    for listener in listeners:
        listener.close()


def _trickle(tls: ssl.SSLSocket, stop: threading.Event) -> None:
    tls.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n")
    with contextlib.suppress(OSError):
        while not stop.wait(0.5):
            tls.sendall(b" ")


def _cut_short(tls: ssl.SSLSocket, stop: threading.Event) -> None:
    tls.sendall(b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{"ok": ')


def test_a_trickling_https_server_is_cut_off_at_the_deadline(
    tls_server: Callable[[Answer], Api], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LAKELET_HTTP_TIMEOUT", "5")
    monkeypatch.setenv("LAKELET_HTTP_DEADLINE", "1.5")
    api = tls_server(_trickle)
    started = time.monotonic()
    # The server trickles until the test stops it: a request the deadline did not cut fails here.
    failed = raised_within(lambda: api.get("list", "/repositories"), ENDED_WITHIN_SECONDS)
    assert isinstance(failed, CLIError), failed
    assert time.monotonic() - started > 1.4  # not before the deadline
    assert "did not finish answering within 1.5 s" in failed.message


def test_an_https_answer_cut_short_is_an_error_not_an_empty_answer(tls_server: Callable[[Answer], Api]) -> None:
    api = tls_server(_cut_short)
    with pytest.raises(CLIError) as failed:
        api.raw("create", "POST", "/x", body={})
    assert failed.value.message.startswith("cannot reach the lakeFS server at https://127.0.0.1:")

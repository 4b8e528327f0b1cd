"""``labwright serve --transport http``: MCP over streamable HTTP, bearer token, Origin check."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest
from _servers import HttpServer, free_port, http_server, http_session, tool_names
from conftest import labwright, write_lab

from device_servers.lab import load
from device_servers.sim.world import SimWorld

pytestmark = pytest.mark.slow

TOKEN = "secret"
EXTRA_ORIGIN = "http://app.example"

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw-httpx", "version": "0"},
    },
}


@pytest.fixture(scope="module")
def lab_and_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, HttpServer]]:
    tmp = tmp_path_factory.mktemp("http")
    lab_file = write_lab(tmp)
    with http_server(
        lab_file, tmp / "server.log", token=TOKEN, extra=("--allow-origin", EXTRA_ORIGIN)
    ) as server:
        yield lab_file, server


@pytest.fixture
def server(lab_and_server: tuple[Path, HttpServer]) -> HttpServer:
    return lab_and_server[1]


def _post(server: HttpServer, **headers: str) -> httpx.Response:
    return httpx.post(
        server.url,
        json=INITIALIZE,
        headers={"Accept": "application/json, text/event-stream", **headers},
        timeout=10,
    )


@pytest.mark.anyio
async def test_a_session_with_the_bearer_token_lists_tools_and_executes_a_transfer(
    lab_and_server: tuple[Path, HttpServer],
) -> None:
    lab_file, server = lab_and_server
    with anyio.fail_after(30):
        async with http_session(server.url, TOKEN) as session:
            assert {"get_state", "transfer", "emergency_stop"} <= tool_names(
                await session.list_tools()
            )
            result = await session.call_tool(
                "transfer",
                {
                    "source": "reservoir",
                    "source_well": "A1",
                    "destination": "plate_1",
                    "destination_wells": ["C3"],
                    "volume_ul": 25,
                    "dry_run": False,
                    "action_id": "http-transfer-1",
                },
            )
            assert not result.isError
            assert result.structuredContent is not None
            assert result.structuredContent["ok"] is True
            assert json.loads(result.content[0].text)["action_id"] == "http-transfer-1"
    world = SimWorld(load(lab_file).world_path)
    assert world.well("plate_1", "C3")["volume_ul"] == pytest.approx(25)


@pytest.mark.parametrize(
    "authorization",
    [None, "Bearer wrong", "Bearer", "Basic secret", "secret", f"Bearer {TOKEN}x"],
    ids=["missing", "wrong", "empty", "basic-scheme", "no-scheme", "token-prefix"],
)
def test_a_missing_or_wrong_token_is_refused_with_401(
    server: HttpServer, authorization: str | None
) -> None:
    headers = {"Authorization": authorization} if authorization is not None else {}
    response = _post(server, **headers)
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")


def test_the_right_token_is_accepted_by_a_raw_post(server: HttpServer) -> None:
    response = _post(server, Authorization=f"Bearer {TOKEN}")
    assert response.status_code == 200


def test_a_foreign_origin_is_refused_with_403_even_with_the_right_token(
    server: HttpServer,
) -> None:
    for origin in ("http://evil.example", f"http://127.0.0.1:{server.port}.evil.example", "null"):
        response = _post(server, Authorization=f"Bearer {TOKEN}", Origin=origin)
        assert response.status_code == 403, origin


@pytest.mark.parametrize("which", ["own-ip", "own-localhost", "configured"])
def test_an_allowed_origin_passes_with_the_right_token(server: HttpServer, which: str) -> None:
    origin = {
        "own-ip": f"http://127.0.0.1:{server.port}",
        "own-localhost": f"http://localhost:{server.port}",
        "configured": EXTRA_ORIGIN,
    }[which]
    response = _post(server, Authorization=f"Bearer {TOKEN}", Origin=origin)
    assert response.status_code == 200


def _listening_addresses(port: int) -> set[str]:
    """Local IPv4/IPv6 addresses with a socket listening on ``port`` (Linux /proc)."""
    found: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            address, port_hex = fields[1].split(":")
            if fields[3] == "0A" and int(port_hex, 16) == port:  # 0A: LISTEN
                found.add(address)
    return found


def test_the_server_binds_to_loopback_only_by_default(server: HttpServer) -> None:
    if not Path("/proc/net/tcp").exists():
        pytest.skip("needs Linux /proc/net/tcp")
    # 0100007F is 127.0.0.1 in /proc's little-endian hex; 00000000 would be every interface.
    assert _listening_addresses(server.port) == {"0100007F"}


def test_a_non_ascii_bearer_token_is_a_401_not_a_server_error(server: HttpServer) -> None:
    for raw in ("Bearer sécret".encode(), b"Bearer \xff\xfe", "Bearer secret✓".encode()):
        response = httpx.post(
            server.url,
            json=INITIALIZE,
            headers={"Accept": "application/json, text/event-stream", "Authorization": raw},
            timeout=10,
        )
        assert response.status_code == 401, raw


@pytest.mark.parametrize(
    "host", ["evil.example", "evil.example:80", "127.0.0.1.evil.example", "localhost:1"]
)
def test_a_foreign_host_header_is_refused_even_with_the_right_token(
    server: HttpServer, host: str
) -> None:
    # DNS rebinding: a page on evil.example resolving to 127.0.0.1 sends its own Host.
    response = _post(server, Authorization=f"Bearer {TOKEN}", Host=host)
    assert response.status_code == 421


@pytest.mark.parametrize("which", ["ip", "localhost"])
def test_the_loopback_host_headers_are_accepted(server: HttpServer, which: str) -> None:
    host = {"ip": f"127.0.0.1:{server.port}", "localhost": f"localhost:{server.port}"}[which]
    response = _post(server, Authorization=f"Bearer {TOKEN}", Host=host)
    assert response.status_code == 200


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.10", "lab-pc.example"])
def test_without_a_token_a_bind_beyond_loopback_is_refused_in_one_line(
    tmp_path: Path, host: str
) -> None:
    lab_file = write_lab(tmp_path)
    result = labwright(
        "serve", "lh1", "--config", str(lab_file), "--transport", "http", "--host", host,
        "--port", str(free_port()), timeout=60, env={"COLUMNS": "400"},
    )  # fmt: skip
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "--token" in result.stderr


def test_without_a_token_a_loopback_server_serves_and_warns(tmp_path: Path) -> None:
    lab_file = write_lab(tmp_path)
    log = tmp_path / "server.log"
    with http_server(lab_file, log) as server:
        assert _post(server).status_code == 200
    assert "without a token" in log.read_text()


def _self_signed(tmp: Path) -> tuple[Path, Path]:
    cert, key = tmp / "cert.pem", tmp / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=localhost",
         "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
        check=True, capture_output=True, timeout=30,
    )  # fmt: skip
    return cert, key


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")
def test_with_a_certificate_and_key_the_server_speaks_https_only(tmp_path: Path) -> None:
    cert, key = _self_signed(tmp_path)
    lab_file = write_lab(tmp_path)
    extra = ("--tls-cert", str(cert), "--tls-key", str(key))
    with http_server(lab_file, tmp_path / "server.log", token=TOKEN, extra=extra) as server:
        url = f"https://127.0.0.1:{server.port}/mcp"
        headers = {
            "Accept": "application/json, text/event-stream",
            "Authorization": f"Bearer {TOKEN}",
        }
        response = httpx.post(url, json=INITIALIZE, headers=headers, verify=str(cert), timeout=10)
        assert response.status_code == 200
        origin = {**headers, "Origin": f"https://127.0.0.1:{server.port}"}
        assert (
            httpx.post(
                url, json=INITIALIZE, headers=origin, verify=str(cert), timeout=10
            ).status_code
            == 200
        )
        with pytest.raises(httpx.HTTPError):
            httpx.post(server.url, json=INITIALIZE, headers=headers, timeout=10)  # plain HTTP


def test_a_certificate_without_its_key_is_refused_in_one_line(tmp_path: Path) -> None:
    cert = tmp_path / "cert.pem"
    cert.write_text("not used")
    result = labwright(
        "serve", "lh1", "--config", str(write_lab(tmp_path)), "--transport", "http",
        "--token", TOKEN, "--tls-cert", str(cert), env={"COLUMNS": "400"}, timeout=60,
    )  # fmt: skip
    assert result.returncode == 2
    assert "--tls-key" in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1

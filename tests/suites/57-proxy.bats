#!/usr/bin/env -S bats --tap
# 57-proxy — network for sandboxed commands through the allowlisting proxy
# (SPEC §15, issue 16), with real clients inside the real sandbox against
# servers this suite starts on loopback: an HTTP server (python3) and a TLS
# server (openssl s_server, a certificate made here). Names are mapped by the
# suite itself: every run happens in its own mount namespace with its own
# /etc/hosts bound over the host's (never the host's file), so the proxy's
# getaddrinfo resolves allowed.test and other.test to 127.0.0.1 without DNS.
# Each refusal is checked three ways: the client's answer, the stderr line of
# `drun-policy run`, and the server's own log on the host (nothing arrived).

bats_require_minimum_version 1.5.0 # run ! (a bare "! cmd" mid-test cannot fail it)

source "$BATS_TEST_DIRNAME/../lib/runner.bash"

setup_file() {
    runner_setup_file
    [ "$(id -u)" = 0 ] || skip "needs root: the name mapping uses a private mount namespace (unshare -m)"
    export T=$(mktemp -d)
    chmod 711 "$T"
    mkdir -p "$T/ws" "$T/ws2" "$T/home" "$T/state" "$T/www"
    echo hello-proxy > "$T/www/index.html"
    # a repository served by the dumb HTTP protocol (static files)
    git init -q "$T/src" && echo cloned-through-the-proxy > "$T/src/README" &&
        git -C "$T/src" add README && git -C "$T/src" -c user.name=t -c user.email=t@t commit -qm one &&
        git clone -q --bare "$T/src" "$T/www/repo.git" && git -C "$T/www/repo.git" update-server-info
    cp "$ROOT/tests/helpers/proxy_client.py" "$T/ws/pc.py"
    cp "$ROOT/tests/helpers/proxy_client.py" "$T/ws2/pc.py"
    printf '127.0.0.1 localhost\n127.0.0.1 allowed.test\n127.0.0.1 other.test\n' > "$T/hosts"
    # two free ports
    read -r HP SP < <("${PYTHON3:-python3}" -c 'import socket
s=[socket.socket() for _ in range(2)]
[x.bind(("127.0.0.1",0)) for x in s]
print(*[x.getsockname()[1] for x in s])')
    export HP SP
    (cd "$T/www" && exec "${PYTHON3:-python3}" -m http.server "$HP" --bind 0.0.0.0 > "$T/http.log" 2>&1) &
    echo $! > "$T/http.pid"
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=allowed.test \
        -addext subjectAltName=DNS:allowed.test -keyout "$T/key.pem" -out "$T/ws/cert.pem" 2> /dev/null
    openssl s_server -accept "$SP" -cert "$T/ws/cert.pem" -key "$T/key.pem" -www -quiet > "$T/tls.log" 2>&1 &
    echo $! > "$T/tls.pid"
    cat > "$T/allow.toml" << TOML
[network]
command_domains = ["allowed.test"]
command_ports = [$HP, $SP]
allow_private_addresses = true
TOML
    cat > "$T/public-only.toml" << TOML
[network]
command_domains = ["allowed.test"]
command_ports = [$HP, $SP]
TOML
    # git writes .git/config and .git/hooks, which the default [protect] keeps read-only
    cat > "$T/git.toml" << TOML
[network]
command_domains = ["allowed.test"]
command_ports = [$HP]
allow_private_addresses = true
[protect]
git_hooks = false
git_config = false
TOML
    cat > "$T/none.toml" << TOML
[network]
allow_private_addresses = true
TOML
    # As root the sandbox runs as the sandbox user, which must own what it writes.
    SBX=$(awk -F: '$1 == "drun-sandbox" {print $3 ":" $4}' /etc/passwd)
    chown -R "${SBX:-65534:65534}" "$T/ws" "$T/ws2" "$T/home"
    # both servers up before any test
    for _ in $(seq 100); do
        curl -s "http://127.0.0.1:$HP/" > /dev/null && curl -sk "https://127.0.0.1:$SP/" > /dev/null && break
        sleep 0.1
    done
}

teardown_file() {
    [ -n "${T:-}" ] || return 0
    for p in "$T/http.pid" "$T/tls.pid"; do [ -f "$p" ] && kill "$(cat "$p")" 2> /dev/null; done
    rm -rf "$T"
}

# prun POLICY WS CMD... — `drun-policy run POLICY -- CMD...` from workspace
# WS, in a private mount namespace whose /etc/hosts is the suite's.
prun() {
    local pol=$1 ws=$2
    shift 2
    run unshare -m sh -c 'mount --bind "$1" /etc/hosts && cd "$2" && shift 2 && exec "$@"' sh "$T/hosts" "$ws" \
        env -i HOME="$T/home" PATH=/usr/local/bin:/usr/bin:/bin XDG_STATE_HOME="$T/state" \
        "$DP" run "$pol" -- "$@"
}

@test "an allowed host over plain HTTP: the page arrives, the server saw the request" {
    prun "$T/allow.toml" "$T/ws" sh -c "curl -sS http://allowed.test:$HP/index.html > got-http"
    [ "$status" -eq 0 ]
    [ "$(cat "$T/ws/got-http")" = hello-proxy ]
    grep -q '"GET /index.html HTTP/1.1" 200' "$T/http.log"
    [[ "$output" != *"network: refused"* ]]
}

@test "an allowed host over HTTPS (CONNECT): TLS to the name, verified against the suite's certificate" {
    prun "$T/allow.toml" "$T/ws" sh -c "curl -sS --cacert cert.pem https://allowed.test:$SP/ > got-tls"
    [ "$status" -eq 0 ]
    grep -q 's_server' "$T/ws/got-tls"
}

@test "git clone over HTTP through the proxy: the repository arrives in the workspace" {
    prun "$T/git.toml" "$T/ws" git clone -q "http://allowed.test:$HP/repo.git" cloned
    [ "$status" -eq 0 ]
    [ "$(cat "$T/ws/cloned/README")" = cloned-through-the-proxy ]
    grep -q '"GET /repo.git/info/refs' "$T/http.log"
}

@test "the command sees exactly the proxy variables, and no descriptor of the channel" {
    prun "$T/allow.toml" "$T/ws" sh -c 'env | grep -i _proxy= | sort > env-seen; ls /proc/self/fd > fds-seen'
    [ "$status" -eq 0 ]
    [ "$(grep -c . "$T/ws/env-seen")" -eq 8 ]
    grep -qx 'HTTPS_PROXY=http://127.0.0.1:3128' "$T/ws/env-seen"
    grep -qx 'no_proxy=localhost,127.0.0.1,::1' "$T/ws/env-seen"
    # 0 1 2 and ls's own directory fd: not the channel (9), not the relay's binary (10)
    [ "$(tr '\n' ' ' < "$T/ws/fds-seen")" = "0 1 2 3 " ]
}

@test "a policy without command_domains has no proxy and no network" {
    prun "$T/none.toml" "$T/ws" sh -c "env | grep -ci _proxy= > env-none; curl -sS -m 5 http://allowed.test:$HP/none-marker"
    [ "$status" -ne 0 ]
    [ "$(cat "$T/ws/env-none")" = 0 ]
    ! grep -q none-marker "$T/http.log"
}

@test "a host not in command_domains is refused, reported once on stderr, and never reached" {
    prun "$T/allow.toml" "$T/ws" sh -c "curl -sS http://other.test:$HP/other-marker; curl -sS http://other.test:$HP/other-marker2; echo curl=\$?"
    [[ "$output" == *"drun proxy: host 'other.test' is not in [network] command_domains"* ]]
    [[ "$output" == *"drun-policy run: network: refused other.test port $HP (2 times): host 'other.test' is not in [network] command_domains"* ]]
    [ "$(grep -c 'network: refused' <<< "$output")" -eq 1 ]
    ! grep -q other-marker "$T/http.log"
}

@test "HTTPS to a host not in command_domains: the CONNECT is refused" {
    prun "$T/allow.toml" "$T/ws" sh -c "curl -sS --cacert cert.pem https://other.test:$SP/"
    [ "$status" -ne 0 ]
    [[ "$output" == *"network: refused other.test port $SP (1 time): host 'other.test' is not in [network] command_domains"* ]]
}

@test "a malformed CONNECT line is refused (400) with the reason" {
    prun "$T/allow.toml" "$T/ws" python3 pc.py raw 'CONNECT allowed.test HTTP/1.1\r\n\r\n'
    [[ "$output" == *"HTTP/1.1 400 Bad Request"* ]]
    [[ "$output" == *"network: refused - (1 time): malformed request: malformed CONNECT target 'allowed.test' (host:port expected)"* ]]
}

@test "a bare LF in the request head is refused" {
    prun "$T/allow.toml" "$T/ws" python3 pc.py raw "GET http://allowed.test:$HP/lf-marker HTTP/1.1\nHost: allowed.test\n\n"
    [[ "$output" == *"HTTP/1.1 400 Bad Request"* ]]
    [[ "$output" == *"malformed request head (a NUL, a bare CR or LF"* ]]
    ! grep -q lf-marker "$T/http.log"
}

@test "a port not in command_ports is refused" {
    prun "$T/allow.toml" "$T/ws" python3 pc.py raw 'CONNECT allowed.test:22 HTTP/1.1\r\nHost: allowed.test:22\r\n\r\n'
    [[ "$output" == *"HTTP/1.1 403 Forbidden"* ]]
    [[ "$output" == *"network: refused allowed.test port 22 (1 time): port 22 is not in [network] command_ports ($HP, $SP)"* ]]
}

@test "a Host header that disagrees with the CONNECT target is refused" {
    prun "$T/allow.toml" "$T/ws" python3 pc.py raw "CONNECT allowed.test:$SP HTTP/1.1\r\nHost: other.test:$SP\r\n\r\n"
    [[ "$output" == *"HTTP/1.1 400 Bad Request"* ]]
    [[ "$output" == *"the Host header 'other.test:$SP' disagrees with the CONNECT target allowed.test:$SP"* ]]
}

@test "a plain request whose Host names another host never reaches the server" {
    prun "$T/allow.toml" "$T/ws" python3 pc.py raw "GET http://allowed.test:$HP/host-marker HTTP/1.1\r\nHost: other.test:$HP\r\n\r\n"
    [[ "$output" == *"HTTP/1.1 400 Bad Request"* ]]
    [[ "$output" == *"disagrees with the request target allowed.test:$HP"* ]]
    ! grep -q host-marker "$T/http.log"
}

@test "two Content-Length headers (request smuggling) are refused" {
    prun "$T/allow.toml" "$T/ws" python3 pc.py raw "POST http://allowed.test:$HP/cl-marker HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nxx"
    [[ "$output" == *"two Content-Length headers"* ]]
    ! grep -q cl-marker "$T/http.log"
}

@test "an allowed name that resolves to a loopback address is refused without allow_private_addresses" {
    prun "$T/public-only.toml" "$T/ws" sh -c "curl -sSf http://allowed.test:$HP/private-marker"
    [ "$status" -ne 0 ]
    [[ "$output" == *"network: refused allowed.test port $HP (1 time): refused: host 'allowed.test' resolves to 127.0.0.1, a loopback address; sandboxed commands reach only public addresses unless the operator sets [network] allow_private_addresses = true"* ]]
    ! grep -q private-marker "$T/http.log"
}

@test "an IP literal is not a name in command_domains" {
    prun "$T/allow.toml" "$T/ws" python3 pc.py raw "CONNECT 127.0.0.1:$SP HTTP/1.1\r\n\r\n"
    [[ "$output" == *"HTTP/1.1 403 Forbidden"* ]]
    [[ "$output" == *"host '127.0.0.1' is not in [network] command_domains"* ]]
}

@test "no other route out: a direct connection bypassing the proxy fails, and no AF_UNIX socket can be made" {
    local ip
    ip=$(hostname -I 2> /dev/null | awk '{print $1}')
    prun "$T/allow.toml" "$T/ws" sh -c "curl -sS -m 5 --noproxy '*' http://allowed.test:$HP/direct-marker; echo direct1=\$?;
        [ -n '$ip' ] && curl -sS -m 5 --noproxy '*' http://$ip:$HP/direct-marker; echo direct2=\$?; python3 pc.py unix"
    [[ "$output" == *"direct1=7"* ]]
    [[ "$output" != *"direct2=0"* ]]
    [[ "$output" == *"refused:"* ]]
    [[ "$output" != *"created"* ]]
    ! grep -q direct-marker "$T/http.log"
}

@test "a tunnel flood is capped per sandbox and another sandbox's request still works meanwhile" {
    rm -f "$T/ws/ready" "$T/ws/done" "$T/ws/flood.out"
    (unshare -m sh -c 'mount --bind "$1" /etc/hosts && cd "$2" && shift 2 && exec "$@"' sh "$T/hosts" "$T/ws" \
        env -i HOME="$T/home" PATH=/usr/local/bin:/usr/bin:/bin XDG_STATE_HOME="$T/state" \
        "$DP" run "$T/allow.toml" -- sh -c 'python3 pc.py flood 100 ready done > flood.out' > "$T/flood.err" 2>&1) &
    local fp=$!
    for _ in $(seq 300); do [ -f "$T/ws/ready" ] && break; sleep 0.1; done
    [ -f "$T/ws/ready" ]
    prun "$T/allow.toml" "$T/ws2" sh -c "curl -sS http://allowed.test:$HP/index.html > got-during-flood"
    touch "$T/ws/done"
    wait "$fp"
    [ "$status" -eq 0 ]
    [ "$(cat "$T/ws2/got-during-flood")" = hello-proxy ]
    [ "$(cat "$T/ws/flood.out")" = "answered 429: 68" ]
    grep -q "network: refused - (68 times): too many tunnels at once: this sandbox may hold 32" "$T/flood.err"
}

@test "explain, diff, the manifest and the macOS profile say what command_domains opens" {
    cat > "$T/review.toml" << 'TOML'
package_install_enabled = true
[network]
command_domains = ["pypi.org", "*.github.com"]
command_ports = [443]
TOML
    printf '[network]\ncommand_domains = ["pypi.org"]\n' > "$T/review-old.toml"
    local facts=(--facts "$ROOT/golden/facts-linux.json" --facts "$ROOT/golden/facts-macos.json")
    run "$DP" explain "$T/review.toml" "${facts[@]}"
    [[ "$output" == *"sandboxed commands may reach       pypi.org, *.github.com (HTTP and HTTPS through the runner's proxy, ports 443; private addresses refused)"* ]]
    [[ "$output" == *"session_package_install may reach  pip: pypi.org, files.pythonhosted.org; npm: registry.npmjs.org (plus command_domains)"* ]]
    run "$DP" diff "$T/review-old.toml" "$T/review.toml" "${facts[@]}"
    [ "$status" -eq 1 ]
    [[ "$output" == *"Network (sandboxed commands, through the proxy)"*"commands may now reach *.github.com"*"commands may no longer reach port 80"* ]]
    rm -rf "$T/out" && "$DP" compile "$T/review.toml" -o "$T/out" "${facts[@]}"
    # the profile's network section, whole: the proxy's port on loopback and nothing else
    run sed -n '/^;; network/,/^$/p' "$T/out/policy.sb"
    [ "$output" = ";; network: only the runner's proxy for [network] command_domains (sandbox-exec -D PROXY_PORT=N, with HTTP_PROXY/HTTPS_PROXY=http://127.0.0.1:N)
(allow network-outbound (remote tcp (string-append \"localhost:\" (param \"PROXY_PORT\"))))" ]
    grep -q '"network.command_ports": \[443\]' "$T/out/policy.json" || "${PYTHON3:-python3}" -c 'import json,sys; d=json.load(open(sys.argv[1])); p=d["policy"]; assert p["network.command_ports"]==[443] and [e["value"] for e in p["network.command_domains"]]==["pypi.org","*.github.com"]' "$T/out/policy.json"
    # without command_domains: no network rule, no manifest keys
    rm -rf "$T/out0" && "$DP" compile "$T/none.toml" -o "$T/out0" "${facts[@]}"
    run ! grep -q 'network-outbound (remote tcp' "$T/out0/policy.sb"
    ! grep -q 'network.command_domains' "$T/out0/policy.json"
}

#!/usr/bin/env bash
# End-to-end check of deploy/opensearch/node.sh against a real node, with curl:
#   start -> index with knn_vector(384, hnsw/lucene/cosinesimil) + keyword/date/text fields ->
#   BM25 match + bool.filter -> knn query with an efficient filter -> standard/english analyzers
#   -> painless cosineSimilarity -> stop (process gone) -> start again on the same data ->
#   same queries -> stop.
#
# By default it uses its own state dir and ports (19201/19301), so a dev node on the default
# ports is left alone. Set NUGGETFLOW_VAR_DIR / NUGGETFLOW_OPENSEARCH_PORT /
# NUGGETFLOW_OPENSEARCH_TRANSPORT_PORT to override; KEEP_VAR=1 keeps the state dir.
# Needs curl and python3 (for building the 384-d vectors and checking JSON).
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
NODE="$SCRIPT_DIR/node.sh"
export NUGGETFLOW_OPENSEARCH_PORT="${NUGGETFLOW_OPENSEARCH_PORT:-19201}"
export NUGGETFLOW_OPENSEARCH_TRANSPORT_PORT="${NUGGETFLOW_OPENSEARCH_TRANSPORT_PORT:-19301}"
OWN_VAR=""
if [[ -z "${NUGGETFLOW_VAR_DIR:-}" ]]; then
    NUGGETFLOW_VAR_DIR="$(mktemp -d "${TMPDIR:-/tmp}/nuggetflow-os-verify.XXXXXX")"
    OWN_VAR=1
fi
export NUGGETFLOW_VAR_DIR
URL="http://127.0.0.1:$NUGGETFLOW_OPENSEARCH_PORT"
INDEX="nuggetflow-verify"
PASSED=0
FAILED=0

cleanup() {
    "$NODE" stop >/dev/null 2>&1 || true
    if [[ -n "$OWN_VAR" && -z "${KEEP_VAR:-}" ]]; then rm -rf "$NUGGETFLOW_VAR_DIR"; fi
}
trap cleanup EXIT

req() {  # req METHOD PATH [JSON-BODY]: prints the response body, fails on HTTP >= 400
    local method="$1" path="$2" body="${3:-}"
    if [[ -n "$body" ]]; then
        curl -sS --fail-with-body -X "$method" "$URL$path" -H 'Content-Type: application/json' -d "$body"
    else
        curl -sS --fail-with-body -X "$method" "$URL$path"
    fi
}

check() {  # check NAME PYTHON-EXPR-ON-r JSON: evaluates the expression with r = parsed JSON
    local name="$1" expr="$2" json="$3"
    if python3 -c '
import json, sys
r = json.loads(sys.argv[2])
ok = eval(sys.argv[1])
sys.exit(0 if ok else 1)' "$expr" "$json"; then
        echo "PASS $name"
        PASSED=$((PASSED + 1))
    else
        echo "FAIL $name: $expr"
        echo "     response: ${json:0:2000}"
        FAILED=$((FAILED + 1))
    fi
}

show() { python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin), indent=1)[:4000])'; }

# 384-d vectors built from 4 weights, one per group of dimensions (j % 4). For the query
# (0,1,0,0.2) the cosine order is d1 (0.98) > d2 (0.94, topic beta) > d3 (0.67) > d4 (0.0).
vec() {
    python3 - "$1" <<'EOF'
import json, math, sys
spec = sys.argv[1]
w = [float(x) for x in spec.split(",")]
v = [sum(w[g] for g in range(len(w)) if j % len(w) == g) + 0.01 * math.sin(j) for j in range(384)]
print(json.dumps([round(x, 5) for x in v]))
EOF
}

hits_ids() { python3 -c 'import json,sys; print(" ".join(h["_id"] for h in json.load(sys.stdin)["hits"]["hits"]))'; }

queries() {  # the read-only checks, run before and after the restart
    local label="$1" r q
    q="$(vec 0,1,0,0.2)"

    echo "== ($label) BM25 match on body (english analyzer) + bool.filter on topic/date"
    r="$(req POST "/$INDEX/_search" '{
      "query": {"bool": {
        "must":   [{"match": {"body": "running runners"}}],
        "filter": [{"term": {"topic": "alpha"}},
                   {"range": {"created_at": {"gte": "2024-01-01"}}}]}},
      "_source": ["doc_id", "topic", "created_at"]}')"
    echo "$r" | show
    echo "hit ids: $(echo "$r" | hits_ids)"
    check "bm25+filter ($label)" \
        'sorted(h["_id"] for h in r["hits"]["hits"]) == ["d1", "d3"] and all(h["_score"] > 0 for h in r["hits"]["hits"])' "$r"

    echo "== ($label) knn query with filter inside the knn clause (efficient filtering)"
    r="$(req POST "/$INDEX/_search" "{
      \"size\": 3,
      \"query\": {\"knn\": {\"embedding\": {\"vector\": $q, \"k\": 3,
                 \"filter\": {\"bool\": {\"filter\": [{\"term\": {\"topic\": \"alpha\"}}]}}}}},
      \"_source\": [\"doc_id\", \"topic\"]}")"
    echo "$r" | show
    echo "hit ids: $(echo "$r" | hits_ids)"
    # d1 is nearest; d2 (topic beta) is excluded by the filter even though it is 2nd nearest overall
    check "knn+filter ($label)" \
        '[h["_id"] for h in r["hits"]["hits"]] == ["d1", "d3", "d4"] and all(h["_source"]["topic"] == "alpha" for h in r["hits"]["hits"])' "$r"

    echo "== ($label) knn query without filter"
    r="$(req POST "/$INDEX/_search" "{\"size\": 2, \"query\": {\"knn\": {\"embedding\": {\"vector\": $q, \"k\": 2}}}, \"_source\": false}")"
    echo "hit ids: $(echo "$r" | hits_ids)"
    check "knn unfiltered ($label)" '[h["_id"] for h in r["hits"]["hits"]] == ["d1", "d2"]' "$r"

    echo "== ($label) painless script_score with k-NN's cosineSimilarity (painless extension)"
    r="$(req POST "/$INDEX/_search" "{\"size\": 4, \"_source\": false, \"query\": {\"script_score\": {
      \"query\": {\"match_all\": {}},
      \"script\": {\"source\": \"1.0 + cosineSimilarity(params.q, doc[params.f])\", \"params\": {\"f\": \"embedding\", \"q\": $q}}}}}")"
    echo "hit ids: $(echo "$r" | hits_ids)"
    check "painless cosineSimilarity ($label)" '[h["_id"] for h in r["hits"]["hits"]] == ["d1", "d2", "d3", "d4"]' "$r"

    r="$(req GET "/$INDEX/_count")"
    check "doc count ($label)" 'r["count"] == 4' "$r"
}

echo "== start (state in $NUGGETFLOW_VAR_DIR, $URL)"
t0=$SECONDS
"$NODE" start
echo "start took $((SECONDS - t0))s"
"$NODE" start   # second start while running: must report and exit 0
"$NODE" status

r="$(req GET "/_cat/plugins?format=json")"
echo "== plugins: $r"
r="$(req GET "/")"
check "version is 2.19.x" 'r["version"]["number"].startswith("2.19.")' "$r"

req DELETE "/$INDEX?ignore_unavailable=true" >/dev/null

echo "== create index with knn_vector (384, hnsw/lucene/cosinesimil) + keyword/date/text"
r="$(req PUT "/$INDEX" '{
  "settings": {"index": {"knn": true, "number_of_shards": 1}},
  "mappings": {"properties": {
    "doc_id":     {"type": "keyword"},
    "topic":      {"type": "keyword"},
    "created_at": {"type": "date"},
    "title":      {"type": "text", "analyzer": "standard"},
    "body":       {"type": "text", "analyzer": "english"},
    "embedding":  {"type": "knn_vector", "dimension": 384,
                   "method": {"name": "hnsw", "engine": "lucene", "space_type": "cosinesimil",
                              "parameters": {"m": 16, "ef_construction": 100}}}}}}')"
echo "$r"
check "index created" 'r.get("acknowledged") is True' "$r"
r="$(req GET "/$INDEX/_mapping")"
check "mapping has knn_vector/lucene" \
    'r["'"$INDEX"'"]["mappings"]["properties"]["embedding"]["method"]["engine"] == "lucene"' "$r"

echo "== index 4 docs"
bulk="$(python3 - "$INDEX" <<'EOF'
import json, math, sys
index = sys.argv[1]
def vec(w):
    return [round(sum(w[g] for g in range(len(w)) if j % len(w) == g) + 0.01 * math.sin(j), 5) for j in range(384)]
docs = [
    ("d1", "alpha", "2024-03-01", "Running shoes", "The runners were running along the river", [0, 1, 0, 0]),
    ("d2", "beta",  "2024-03-02", "Running tips",  "Running every morning keeps runners healthy", [0, 1, 0, 0.6]),
    ("d3", "alpha", "2024-04-10", "Marathon",      "She runs marathons and other long running events", [0, 0.6, 0, 1]),
    ("d4", "alpha", "2024-05-20", "Cooking",       "Slow cooking of vegetables in a clay pot", [1, 0, 1, 0]),
]
for i, topic, date, title, body, w in docs:
    print(json.dumps({"index": {"_index": index, "_id": i}}))
    print(json.dumps({"doc_id": i, "topic": topic, "created_at": date, "title": title, "body": body, "embedding": vec(w)}))
EOF
)"
r="$(curl -sS --fail-with-body -X POST "$URL/_bulk?refresh=true" -H 'Content-Type: application/x-ndjson' --data-binary "$bulk"$'\n')"
check "bulk indexed without errors" 'r["errors"] is False and len(r["items"]) == 4' "$r"

echo "== analyzers (standard from the server, english from analysis-common)"
r="$(req POST "/_analyze" '{"analyzer": "standard", "text": "The Runners were RUNNING"}')"
echo "standard: $(echo "$r" | python3 -c 'import json,sys; print([t["token"] for t in json.load(sys.stdin)["tokens"]])')"
check "standard analyzer" '[t["token"] for t in r["tokens"]] == ["the", "runners", "were", "running"]' "$r"
r="$(req POST "/_analyze" '{"analyzer": "english", "text": "The Runners were RUNNING"}')"
echo "english:  $(echo "$r" | python3 -c 'import json,sys; print([t["token"] for t in json.load(sys.stdin)["tokens"]])')"
check "english analyzer (stemming; lucene english stop set has no \"were\")" '[t["token"] for t in r["tokens"]] == ["runner", "were", "run"]' "$r"
r="$(req POST "/$INDEX/_analyze" '{"field": "body", "text": "runs"}')"
check "field analyzer (body -> english)" '[t["token"] for t in r["tokens"]] == ["run"]' "$r"

r="$(req GET "/_cluster/health/$INDEX")"
check "index is green (replicas default to 0)" 'r["status"] == "green"' "$r"

queries "first start"

echo "== stop"
pid="$(cat "$NUGGETFLOW_VAR_DIR/opensearch/opensearch.pid")"
t0=$SECONDS
"$NODE" stop
echo "stop took $((SECONDS - t0))s"
if kill -0 "$pid" 2>/dev/null; then
    echo "FAIL process $pid still alive after stop"; FAILED=$((FAILED + 1))
else
    echo "PASS process $pid is gone"; PASSED=$((PASSED + 1))
fi
if [[ -e "$NUGGETFLOW_VAR_DIR/opensearch/opensearch.pid" ]]; then
    echo "FAIL pid file left behind"; FAILED=$((FAILED + 1))
else
    echo "PASS pid file removed"; PASSED=$((PASSED + 1))
fi
if grep -q "node closed" "$NUGGETFLOW_VAR_DIR/opensearch/logs/opensearch.log"; then
    echo "PASS clean shutdown logged"; PASSED=$((PASSED + 1))
else
    echo "FAIL no clean shutdown in log"; FAILED=$((FAILED + 1))
fi
"$NODE" status || echo "(status exit $? while stopped, as expected)"

echo "== restart on the same data"
t0=$SECONDS
"$NODE" start
echo "restart took $((SECONDS - t0))s"
queries "after restart"

"$NODE" stop
echo "$PASSED passed, $FAILED failed"
[[ "$FAILED" -eq 0 ]]

package api

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestHTTPErrorRoundTrip decodes the error bodies FastAPI writes, a message
// or a validation error's list, and encodes them back unchanged.
func TestHTTPErrorRoundTrip(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		wantErr bool
	}{
		{"message", `{"detail":"Not Found"}`, false},
		{"empty message", `{"detail":""}`, false},
		{"validation errors", `{"detail":[{"loc":["query","window"],"msg":"Input should be a valid integer","type":"int_parsing"}]}`, false},
		{"validation error in a list item", `{"detail":[{"loc":["body",0,"name"],"msg":"Field required","type":"missing"},{"loc":["query","q"],"msg":"bad","type":"value_error"}]}`, false},
		{"empty list", `{"detail":[]}`, false},
		{"a number", `{"detail":3}`, true},
		{"an object", `{"detail":{"msg":"x"}}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e HTTPError
			err := json.Unmarshal([]byte(tt.body), &e)
			if tt.wantErr {
				if err == nil {
					t.Errorf("decoded %s as %+v, want an error", tt.body, e)
				}
				return
			}
			if err != nil {
				t.Fatalf("decoding %s: %v", tt.body, err)
			}
			got, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.body {
				t.Errorf("round trip %s, want %s", got, tt.body)
			}
		})
	}
}

func TestDetail(t *testing.T) {
	tests := []struct {
		body       string
		wantMsg    string
		wantErrors int
		wantString string
	}{
		{`{"detail":"Not Found"}`, "Not Found", 0, "Not Found"},
		{`{"detail":[{"loc":["query","window"],"msg":"Input should be a valid integer","type":"int_parsing"}]}`, "", 1, "query.window: Input should be a valid integer"},
		{`{"detail":[{"loc":["body",0],"msg":"a","type":"x"},{"loc":["query","q"],"msg":"b","type":"y"}]}`, "", 2, "body.0: a; query.q: b"},
	}
	for _, tt := range tests {
		var e HTTPError
		if err := json.Unmarshal([]byte(tt.body), &e); err != nil {
			t.Fatalf("%s: %v", tt.body, err)
		}
		if e.Detail.Message != tt.wantMsg || len(e.Detail.Errors) != tt.wantErrors || e.Detail.String() != tt.wantString {
			t.Errorf("%s: decoded %+v, String %q; want message %q, %d errors, String %q",
				tt.body, e.Detail, e.Detail.String(), tt.wantMsg, tt.wantErrors, tt.wantString)
		}
	}
	var e HTTPError
	if err := json.Unmarshal([]byte(`{"detail":[{"loc":["q"],"msg":"m","type":"t"}]}`), &e); err != nil {
		t.Fatal(err)
	}
	if v := e.Detail.Errors[0]; v.Msg != "m" || v.Type != "t" || len(v.Loc) != 1 || v.Loc[0] != "q" {
		t.Errorf("validation error decoded as %+v", v)
	}
}

// TestPairsAreOptional: an answer in the specification's shape decodes
// with no pairs, and one encoded without pairs has no such key, so a
// reader that knows nothing of pairs reads the answer as the contract
// has it; one with pairs keeps them through a round trip.
func TestPairsAreOptional(t *testing.T) {
	var spec SimulationResponse
	if err := json.Unmarshal([]byte(`{"results":{"n1":{"score":0.5,"latency_ms":1,"bandwidth_mbps":100,"packet_loss":0}}}`), &spec); err != nil {
		t.Fatal(err)
	}
	if spec.Pairs != nil || spec.Results["n1"].Score != 0.5 {
		t.Errorf("the specification's answer decoded as %+v", spec)
	}
	b, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "pairs") {
		t.Errorf("an answer without pairs encodes as %s", b)
	}
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	high := 0.4
	with := SimulationResponse{Results: map[string]NodeResult{}, Pairs: &Pairs{WindowSeconds: 15,
		Coordinates: map[string]Coordinate{"n1": {Vec: []float64{1e-4, 0, 0, 0, 0, 0, 0, 0}, Error: 0.2, Height: 1e-5, Samples: 31, MeasuredAt: at, AgeSeconds: 2}},
		Measured:    []PairMeasurement{{From: "n1", To: "n2", LatencyMs: &Estimate{Value: 0.3, Low: 0.2, High: &high, Samples: 700, MeasuredAt: at}}}}}
	b, err = json.Marshal(with)
	if err != nil {
		t.Fatal(err)
	}
	var back SimulationResponse
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, with) {
		t.Errorf("round trip of %s gave %+v", b, back)
	}
}

package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Sent message ids in Redis (RPC-18): one string per (owner, message id,
// target), P{o:<owner>}:sent:<message id>:<target> (the owner's hash
// tag), holding "<at ms> <record JSON>" and expiring once its dedupe
// window is over. A claim is one script, atomic across instances.

var _ SentMessageStore = (*Redis)(nil)

func (s *Redis) sentKey(owner, messageID, target string) string {
	return s.p + "{o:" + keyPart(owner) + "}:sent:" + keyPart(messageID) + ":" + keyPart(target)
}

// claimSentScript returns the record held at KEYS[1] when it was made at or
// after ARGV[2] (ms), else stores ARGV[1] for ARGV[3] ms and returns nil.
var claimSentScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if v then
  local at = tonumber(string.match(v, '^(%d+) '))
  if at and at >= tonumber(ARGV[2]) then return v end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
return false
`)

// sentRecord is the JSON of a record (the key holds owner, id and target).
type sentRecord struct {
	TaskID   string `json:"t"`
	StartSeq uint64 `json:"s,omitempty"`
	BodyHash string `json:"h"`
}

// sentMargin keeps a record a little past its window (clocks of the
// instances differ); the script compares times, not the expiry.
const sentMargin = time.Second

// ClaimMessage implements SentMessageStore.
func (s *Redis) ClaimMessage(ctx context.Context, m SentMessage, since time.Time) (*SentMessage, error) {
	if err := s.live(); err != nil {
		return nil, err
	}
	b, err := json.Marshal(sentRecord{TaskID: m.TaskID, StartSeq: m.StartSeq, BodyHash: m.BodyHash})
	if err != nil {
		return nil, fmt.Errorf("encoding sent message: %w", err)
	}
	ttl := max(m.At.Sub(since), 0) + sentMargin
	val := strconv.FormatInt(m.At.UnixMilli(), 10) + " " + string(b)
	got, err := claimSentScript.Run(ctx, s.c, []string{s.sentKey(m.Owner, m.MessageID, m.Target)},
		val, since.UnixMilli(), ttl.Milliseconds()).Text()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, s.opErr("recording sent message", err)
	}
	ms, body, ok := strings.Cut(got, " ")
	at, perr := strconv.ParseInt(ms, 10, 64)
	var r sentRecord
	if !ok || perr != nil || json.Unmarshal([]byte(body), &r) != nil {
		return nil, errors.New("reading sent message: malformed record")
	}
	return &SentMessage{Owner: m.Owner, MessageID: m.MessageID, Target: m.Target, TaskID: r.TaskID,
		StartSeq: r.StartSeq, BodyHash: r.BodyHash, At: time.UnixMilli(at).UTC()}, nil
}

// ForgetMessage implements SentMessageStore.
func (s *Redis) ForgetMessage(ctx context.Context, owner, messageID, target string) error {
	if err := s.live(); err != nil {
		return err
	}
	if err := s.c.Del(ctx, s.sentKey(owner, messageID, target)).Err(); err != nil {
		return s.opErr("forgetting sent message", err)
	}
	return nil
}

package redisrpc

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/jsonrpc"
	"github.com/caddy-a2a/caddy-a2a/internal/redisstream"
)

// writeTimeout bounds one Redis write (a response entry, the ack).
const writeTimeout = 5 * time.Second

// errAbandoned says a request was given up at a stop: it stays pending.
var errAbandoned = errors.New("abandoned at stop")

// nullID is the id of answers to requests whose id could not be read.
var nullID = json.RawMessage("null")

// serve answers one entry and acknowledges it once its last response is
// written; on a write failure or a stop it leaves the entry pending. A
// re-claimed entry delivered more than MaxDeliveries times is answered
// with an error instead of run again.
func (c *Consumer) serve(m redis.XMessage, reclaimed bool) {
	defer c.handlers.Done()
	defer c.end(m.ID)
	req := parseEntry(m, c.opts.MaxPayloadBytes)
	if req.correlation == "" || !c.opts.allowedReply(req.reply) {
		c.refuse(req, "")
		return
	}
	if ok, err := c.writable(req.reply); err != nil {
		c.logger.Warn("redis_rpc: checking the reply stream failed; the request stays pending", zap.String("entry", req.id), zap.Error(err))
		return
	} else if !ok {
		// A key of another type: no answer could ever be written, so the
		// request must not run (nor come back forever).
		c.refuse(req, "reply_stream is not a stream")
		return
	}
	var err error
	if reclaimed && c.deliveries(req.id) > MaxDeliveries {
		c.gaveUp.Add(1)
		c.logger.Warn("redis_rpc: giving up on a request delivered too often", zap.String("entry", req.id), zap.Int("max_deliveries", MaxDeliveries))
		id, method := peekID(req.payload)
		err = c.write(req, c.d.Refuse(c.serveCtx, c.call(req, ""), id, method, a2a.NewError(a2a.CodeInternalError, "Internal error: the request was abandoned after %d deliveries", MaxDeliveries)).Response, true)
	} else {
		err = c.answer(c.serveCtx, req)
	}
	switch {
	case errors.Is(err, errAbandoned):
		c.abandoned.Add(1)
		return
	case err != nil:
		// Left pending: re-claimed and answered again after ClaimAfter.
		c.logger.Warn("redis_rpc: writing a response failed; the request stays pending",
			zap.String("entry", req.id), zap.Error(err))
		return
	}
	if err := c.ack(req.id); err != nil {
		c.logger.Warn("redis_rpc: acknowledging a request failed", zap.String("entry", req.id), zap.Error(err))
		return
	}
	c.served.Add(1)
}

// refuse acknowledges an entry that cannot be answered: no
// correlation_id, a reply stream outside the prefix (never written to) or
// a reply key that is not a stream. It is counted and logged, with reason
// (default: from the entry), never with its payload.
func (c *Consumer) refuse(req request, reason string) {
	c.refused.Add(1)
	_ = c.d.Refuse(c.serveCtx, c.call(req, ""), nullID, "", a2a.NewError(a2a.CodeInvalidRequest, "Invalid Request: the entry cannot be answered"))
	switch {
	case reason != "":
	case req.correlation == "":
		reason = "no correlation_id"
	default:
		reason = "reply_stream outside response_prefix"
	}
	stream := req.reply
	if len(stream) > 64 {
		stream = stream[:64] + "…"
	}
	c.logger.Warn("redis_rpc: request refused, not answered", zap.String("entry", req.id),
		zap.String("reason", reason), zap.String("reply_stream", strconv.Quote(stream)))
	if err := c.ack(req.id); err != nil {
		c.logger.Warn("redis_rpc: acknowledging a request failed", zap.String("entry", req.id), zap.Error(err))
	}
}

// call is the agent.Call of a request entry for principal.
func (c *Consumer) call(req request, principal string) agent.Call {
	return agent.Call{Binding: agent.BindingRedis, Principal: principal, BaseURL: c.opts.BaseURL, Version: req.version(), Extensions: req.extensions()}
}

// answer runs the request and writes its responses: one final entry for
// a unary method (none for a notification), one entry per event then a
// final one for a streaming method.
func (c *Consumer) answer(ctx context.Context, req request) error {
	if req.err != nil {
		msg := "Invalid Request: " + req.err.Error()
		if errors.Is(req.err, errTooLarge) {
			msg = "Invalid Request: the payload exceeds " + strconv.FormatInt(c.opts.MaxPayloadBytes, 10) + " bytes"
		}
		return c.write(req, c.d.Refuse(ctx, c.call(req, ""), nullID, "", a2a.NewError(a2a.CodeInvalidRequest, "%s", msg)).Response, true)
	}
	var principal string
	var ident *agent.Identity
	if c.authn != nil {
		p, who, ok := c.identify(ctx, req.headers)
		if !ok {
			id, method := peekID(req.payload)
			return c.write(req, c.d.Refuse(ctx, c.call(req, ""), id, method, a2a.ErrUnauthenticated()).Response, true)
		}
		principal, ident = p, who
	}
	call := c.call(req, principal)
	call.Identity = ident // AUTH-8: the credential's scopes and claims
	out := c.d.Handle(ctx, call, []byte(req.payload))
	if ctx.Err() != nil {
		if out.Stream != nil {
			out.Stream.Detach()
		}
		return errAbandoned
	}
	if out.Stream == nil {
		if out.Response == nil {
			return nil // a notification: nothing to answer
		}
		return c.write(req, out.Response, true)
	}
	return c.pump(ctx, req, out)
}

// pump writes every event of the outcome's stream as a non-final entry,
// then the final entry, through the dispatcher's Pump. A stop or a failed
// write detaches the stream (the turn goes on) and leaves the request
// pending.
func (c *Consumer) pump(ctx context.Context, req request, out jsonrpc.Outcome) error {
	return c.d.Pump(ctx, out, jsonrpc.Carrier{
		Send: func(frame []byte) error { return c.write(req, frame, false) },
		Final: func(id json.RawMessage, stopped bool) error {
			if stopped {
				return errAbandoned
			}
			return c.write(req, jsonrpc.EndFrame(id), true)
		},
		DetachOnStop: true,
	})
}

// write adds one response entry to the request's reply stream, capped
// (MAXLEN ~) and given an expiry.
func (c *Consumer) write(req request, payload []byte, final bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	pipe := c.rdb.TxPipeline()
	pipe.XAdd(ctx, &redis.XAddArgs{
		Stream: req.reply, MaxLen: c.opts.ReplyMaxLen, Approx: true,
		Values: []any{FieldCorrelationID, req.correlation, FieldPayload, string(payload), FieldFinal, strconv.FormatBool(final)},
	})
	pipe.Expire(ctx, req.reply, c.opts.ReplyTTL)
	if _, err := pipe.Exec(ctx); err != nil {
		return redisstream.ShortErr(err)
	}
	return nil
}

// deliveries is how often the entry was delivered (XPENDING); 0 when
// unknown.
func (c *Consumer) deliveries(id string) int64 {
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	p, err := c.rdb.XPendingExt(ctx, &redis.XPendingExtArgs{
		Stream: c.opts.RequestStream, Group: c.opts.Group, Start: id, End: id, Count: 1,
	}).Result()
	if err != nil || len(p) != 1 {
		return 0
	}
	return p[0].RetryCount
}

// writable reports whether key is a stream or absent (XADD creates it).
func (c *Consumer) writable(key string) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	t, err := c.rdb.Type(ctx, key).Result()
	if err != nil {
		return false, redisstream.ShortErr(err)
	}
	return t == "stream" || t == "none", nil
}

// ack acknowledges and deletes a request entry (so the request stream
// holds only unserved requests).
func (c *Consumer) ack(id string) error {
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	pipe := c.rdb.TxPipeline()
	pipe.XAck(ctx, c.opts.RequestStream, c.opts.Group, id)
	pipe.XDel(ctx, c.opts.RequestStream, id)
	if _, err := pipe.Exec(ctx); err != nil {
		return redisstream.ShortErr(err)
	}
	return nil
}

// peekID reads the id and method of a request object, for an answer
// given before the dispatcher runs (null and "" when unreadable).
func peekID(payload string) (json.RawMessage, string) {
	var v struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if err := json.Unmarshal([]byte(payload), &v); err != nil || len(v.ID) == 0 {
		return nullID, ""
	}
	if len(v.Method) > 64 {
		v.Method = ""
	}
	return v.ID, v.Method
}

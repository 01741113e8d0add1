package store

import (
	"crypto/tls"
	"encoding/base64"
	"errors"
	"net/url"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// RedisAddress is urls as a message may name them: each URL without its
// user, password, query (which may hold sentinel_password) and fragment,
// comma-separated; "(invalid URL)" for one that does not parse.
func RedisAddress(urls []string) string {
	out := make([]string, len(urls))
	for i, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil {
			out[i] = "(invalid URL)"
			continue
		}
		u.User = nil
		u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = "", false, "", ""
		out[i] = u.String()
	}
	return strings.Join(out, ", ")
}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// newRedisClient builds the universal client of the store's URLs: one
// plain, TLS, unix, Sentinel or cluster URL, or several URLs (the seed
// nodes of a cluster). Errors never echo a URL (it may hold a password).
func newRedisClient(urls []string) (redis.UniversalClient, error) {
	switch len(urls) {
	case 0:
		return nil, errors.New("redis store: url is required")
	case 1:
		return oneURLClient(urls[0])
	}
	var o *redis.ClusterOptions
	for i, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" {
			return nil, errors.New("redis store: url " + strconv.Itoa(i+1) + ": several URLs are cluster nodes and must be redis:// or rediss:// URLs")
		}
		if o == nil {
			o, err = redis.ParseClusterURL(raw)
			if err != nil {
				return nil, errors.New("redis store: url " + strconv.Itoa(i+1) + ": invalid cluster URL")
			}
			continue
		}
		o.Addrs = append(o.Addrs, u.Host)
	}
	return redis.NewClusterClient(o), nil
}

func oneURLClient(raw string) (redis.UniversalClient, error) {
	if strings.HasPrefix(raw, "redis+sentinel://") || strings.HasPrefix(raw, "rediss+sentinel://") {
		return sentinelClient(raw)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, errors.New("redis store: invalid url")
	}
	switch u.Scheme {
	case "redis", "rediss", "unix":
	default:
		return nil, errors.New("redis store: url must be redis://, rediss://, unix:// or redis+sentinel://")
	}
	q := u.Query()
	switch {
	case q.Get("master_name") != "":
		o, err := redis.ParseFailoverURL(raw)
		if err != nil {
			return nil, errors.New("redis store: invalid sentinel url")
		}
		return redis.NewFailoverClient(o), nil
	case q.Has("addr"):
		o, err := redis.ParseClusterURL(raw)
		if err != nil {
			return nil, errors.New("redis store: invalid cluster url")
		}
		return redis.NewClusterClient(o), nil
	}
	o, err := redis.ParseURL(raw)
	if err != nil {
		return nil, errors.New("redis store: invalid url")
	}
	return redis.NewClient(o), nil
}

// sentinelClient parses redis+sentinel://[user:pass@]s1:26379,s2:26379/MASTER[/db]
// (rediss+sentinel:// for TLS to the master): the user and password are
// the master's; sentinel_password=… in the query authenticates to the
// sentinels. A host without a port means 26379.
func sentinelClient(raw string) (redis.UniversalClient, error) {
	scheme, rest, _ := strings.Cut(raw, "://")
	rest, query, _ := strings.Cut(rest, "?")
	authority, path, _ := strings.Cut(rest, "/")
	var userinfo string
	if i := strings.LastIndex(authority, "@"); i >= 0 {
		userinfo, authority = authority[:i], authority[i+1:]
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	if authority == "" || parts[0] == "" || len(parts) > 2 {
		return nil, errors.New("redis store: sentinel url must be redis+sentinel://host:port[,host:port…]/MASTER[/db]")
	}
	o := &redis.FailoverOptions{MasterName: parts[0]}
	for _, h := range strings.Split(authority, ",") {
		if h == "" {
			continue
		}
		if !strings.Contains(h, ":") {
			h += ":26379"
		}
		o.SentinelAddrs = append(o.SentinelAddrs, h)
	}
	if len(parts) == 2 {
		db, err := strconv.Atoi(parts[1])
		if err != nil || db < 0 {
			return nil, errors.New("redis store: sentinel url: invalid database number")
		}
		o.DB = db
	}
	if userinfo != "" {
		u, err := url.Parse("x://" + userinfo + "@h/")
		if err != nil || u.User == nil {
			return nil, errors.New("redis store: sentinel url: invalid user or password")
		}
		o.Username = u.User.Username()
		o.Password, _ = u.User.Password()
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return nil, errors.New("redis store: sentinel url: invalid query")
	}
	o.SentinelPassword = q.Get("sentinel_password")
	if scheme == "rediss+sentinel" {
		// The master is found through the sentinels; its certificate is
		// verified against the system roots.
		o.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	return redis.NewFailoverClient(o), nil
}

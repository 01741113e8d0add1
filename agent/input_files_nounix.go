//go:build !unix

package agent

// nonblockFlag is 0 where the platform has no O_NONBLOCK open flag.
const nonblockFlag = 0

// Package telemetry lets a tool read the ports of a running gopmd process:
// the process serves their counters and ring state on a local unix socket,
// in JSON, as DPDK's telemetry socket does for its applications, and
// nicctl stats and nicctl rings read it (--telemetry PATH, or
// --telemetry auto to find the process that holds the port). The port
// itself cannot be opened twice, and opening it again would reset it.
//
// A process serves its ports with one call and stops at exit:
//
//	srv, err := telemetry.Listen(telemetry.DefaultPath("myapp"), func() []driver.Port { return ports })
//	...
//	defer srv.Close() // removes the socket
//
// The socket is a SOCK_SEQPACKET unix socket, mode 0660, in a directory
// only its owner can write (DefaultDir: /run/gopmd as root, else
// $XDG_RUNTIME_DIR/gopmd, else /tmp/gopmd-UID), named APP.PID.sock. Listen
// refuses a path that is a symbolic link or something other than a socket,
// and a socket another process still answers on; it removes a stale one
// that a process which died left behind.
//
// The protocol: on connect the server sends one message, an Info object;
// then each message the client sends is a command and gets one message
// back, a JSON object whose only key is the command (without its
// parameter) and whose value is the answer, or an "error" key:
//
//	/                  the commands
//	/info              the Info object again
//	/ports             every port: index, name, driver, link, queue counts
//	/stats,PORT        a port's counters (PORT: its name, the name without
//	                   its ?options, or its index)
//	/rings,PORT        a port's rings, as the device shows them while the
//	                   process polls (driver.LiveInspector)
//
// A client uses Dial and the Client's methods, or any tool that speaks
// SOCK_SEQPACKET (socat - UNIX-CONNECT:PATH,type=5 does).
package telemetry

package driver

import "strings"

// Device counters under one set of names for every driver, after the
// names Linux's ethtool -S shows for these NICs (the fec driver's rx_*/tx_*
// names). PortStats.HW carries them beside each driver's own names from
// its reference manual (ENETC RFRM..., FEC RMON_R_PACKETS...): a tool that
// wants one vocabulary reads these. Every value is a 64-bit total since the
// device was opened (32-bit registers are accumulated), present on every
// port whose device has the counter (an ENETC VF has no MAC counters).
//
//	name            ENETC (PF)           FEC                 what
//	rx_octets       REOCT                RMON_R_OCTETS       bytes received, good and bad
//	rx_packets      RPKT                 RMON_R_PACKETS      frames received, good and bad
//	rx_frames_ok    RFRM                 IEEE_R_FRAME_OK     frames received without error
//	rx_broadcast    RBCA                 RMON_R_BC_PKT       broadcast frames received
//	rx_multicast    RMCA                 RMON_R_MC_PKT       multicast frames received
//	rx_crc_errors   RFCS                 IEEE_R_CRC          frames with a bad FCS
//	rx_undersize    RUND                 RMON_R_UNDERSIZE    frames shorter than the minimum
//	rx_oversize     ROVR                 RMON_R_OVERSIZE     frames longer than the maximum
//	rx_fragment     RFRG                 RMON_R_FRAG         short frames with a bad FCS
//	rx_jabber       RJBR                 RMON_R_JAB          long frames with a bad FCS
//	rx_pause        RXPF                 IEEE_R_FDXFC        pause frames received
//	rx_dropped      RDRP                 RMON_R_DROP         frames the MAC discarded (mac_discard)
//	rx_no_buffer    sum of RBDCR(n)      IEEE_R_DROP         frames with no buffer posted
//	tx_octets       TEOCT                RMON_T_OCTETS       bytes sent, good and bad
//	tx_packets      TPKT                 RMON_T_PACKETS      frames sent, good and bad
//	tx_frames_ok    TFRM                 IEEE_T_FRAME_OK     frames sent without error
//	tx_broadcast    TBCA                 RMON_T_BC_PKT       broadcast frames sent
//	tx_multicast    TMCA                 RMON_T_MC_PKT       multicast frames sent
//	tx_undersize    TUND                 RMON_T_UNDERSIZE    frames sent below the minimum
//	tx_pause        TXPF                 IEEE_T_FDXFC        pause frames sent
//	tx_errors       TERR                 IEEE_T_MACERR       frames the MAC failed to send
var HWStatNames = []string{
	"rx_octets", "rx_packets", "rx_frames_ok", "rx_broadcast", "rx_multicast",
	"rx_crc_errors", "rx_undersize", "rx_oversize", "rx_fragment", "rx_jabber",
	"rx_pause", "rx_dropped", "rx_no_buffer",
	"tx_octets", "tx_packets", "tx_frames_ok", "tx_broadcast", "tx_multicast",
	"tx_undersize", "tx_pause", "tx_errors",
}

// HWGauge reports whether the PortStats.HW entry name is a value that can
// go down (a Prometheus gauge) rather than a total since the device was
// opened: the link state (link_up, 1 or 0), its speed (link_speed_mbps),
// and maxima (names ending in _max or containing _max_, such as
// drv_tx0_mdio_wait_max_ns). A driver names a new level that way or adds
// it here.
func HWGauge(name string) bool {
	switch name {
	case "link_up", "link_speed_mbps":
		return true
	}
	return strings.HasSuffix(name, "_max") || strings.Contains(name, "_max_")
}

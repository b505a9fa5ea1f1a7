//! Which addresses the crawler may connect to. By default it refuses loopback, private,
//! shared (CGNAT), link-local, multicast, broadcast, unspecified and documentation
//! addresses, so that a seed list or a redirect cannot make it probe an internal
//! network. The check runs on literal IPs in every URL (each redirect hop included) and
//! inside the DNS resolver, which drops forbidden addresses from every answer, so the
//! connection can only go to an address that passed (no DNS rebinding between check and
//! connect).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use url::{Host, Url};

use crate::error::IngestError;

/// The address policy. Tests enable loopback explicitly; nothing else should.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct AddressPolicy {
    /// Allow 127.0.0.0/8 and ::1.
    pub allow_loopback: bool,
    /// Allow private ranges (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7).
    pub allow_private: bool,
}

impl AddressPolicy {
    /// Why `ip` is refused, or `Ok` when it may be contacted.
    pub fn check(&self, ip: IpAddr) -> Result<(), &'static str> {
        match ip {
            IpAddr::V4(v4) => self.check_v4(v4),
            IpAddr::V6(v6) => {
                if let Some(v4) = v6.to_ipv4_mapped() {
                    return self.check_v4(v4);
                }
                self.check_v6(v6)
            }
        }
    }

    fn check_v4(&self, ip: Ipv4Addr) -> Result<(), &'static str> {
        let o = ip.octets();
        if ip.is_loopback() {
            return if self.allow_loopback { Ok(()) } else { Err("loopback address") };
        }
        if ip.is_unspecified() || o[0] == 0 {
            return Err("unspecified address");
        }
        if ip.is_link_local() {
            return Err("link-local address");
        }
        if ip.is_multicast() || o[0] >= 240 {
            return Err("multicast, broadcast or reserved address");
        }
        if ip.is_documentation() || (o[0] == 198 && (o[1] & 0xfe) == 18) {
            return Err("documentation or benchmarking address");
        }
        let private =
            ip.is_private() || (o[0] == 100 && (o[1] & 0xc0) == 64) || (o[0] == 192 && o[1] == 0 && o[2] == 0);
        if private {
            return if self.allow_private { Ok(()) } else { Err("private address") };
        }
        Ok(())
    }

    fn check_v6(&self, ip: Ipv6Addr) -> Result<(), &'static str> {
        let s = ip.segments();
        if ip.is_loopback() {
            return if self.allow_loopback { Ok(()) } else { Err("loopback address") };
        }
        if ip.is_unspecified() {
            return Err("unspecified address");
        }
        if ip.is_multicast() {
            return Err("multicast address");
        }
        if (s[0] & 0xffc0) == 0xfe80 {
            return Err("link-local address");
        }
        if (s[0] & 0xfe00) == 0xfc00 || (s[0] & 0xffc0) == 0xfec0 {
            return if self.allow_private { Ok(()) } else { Err("private address") };
        }
        if s[0] == 0x2001 && s[1] == 0x0db8 {
            return Err("documentation address");
        }
        // 6to4 and NAT64 embed IPv4 addresses: check the embedded one.
        if s[0] == 0x2002 {
            let v4 = Ipv4Addr::new((s[1] >> 8) as u8, s[1] as u8, (s[2] >> 8) as u8, s[2] as u8);
            return self.check_v4(v4);
        }
        if s[0] == 0x64 && s[1] == 0xff9b {
            let v4 = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
            return self.check_v4(v4);
        }
        Ok(())
    }

    /// Check a URL whose host is a literal IP (names are checked by the resolver).
    pub fn check_url(&self, url: &Url) -> Result<(), IngestError> {
        let ip = match url.host() {
            Some(Host::Ipv4(ip)) => IpAddr::V4(ip),
            Some(Host::Ipv6(ip)) => IpAddr::V6(ip),
            Some(Host::Domain(d)) => {
                // "localhost" and friends never need DNS to be recognised.
                let d = d.trim_end_matches('.').to_ascii_lowercase();
                if (d == "localhost" || d.ends_with(".localhost")) && !self.allow_loopback {
                    return Err(forbidden(url, &d, "loopback address"));
                }
                return Ok(());
            }
            None => return Err(IngestError::Url { url: url.to_string(), reason: "no host".into() }),
        };
        self.check(ip).map_err(|r| forbidden(url, &ip.to_string(), r))
    }
}

fn forbidden(url: &Url, addr: &str, reason: &'static str) -> IngestError {
    IngestError::Forbidden { url: url.to_string(), addr: addr.to_owned(), reason }
}

/// The resolver's refusal, recognisable in reqwest's error chain.
#[derive(Debug, thiserror::Error)]
#[error("{host} resolves only to forbidden addresses ({addrs}: {reason})")]
pub struct PolicyRefusal {
    /// The name looked up.
    pub host: String,
    /// What it resolved to.
    pub addrs: String,
    /// Why the first address was refused.
    pub reason: &'static str,
}

/// A DNS resolver (the system's, through tokio) that drops forbidden addresses.
#[derive(Debug, Clone)]
pub struct PolicyResolver {
    policy: AddressPolicy,
}

impl PolicyResolver {
    /// A resolver enforcing `policy`.
    pub fn new(policy: AddressPolicy) -> Self {
        PolicyResolver { policy }
    }
}

impl Resolve for PolicyResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let policy = self.policy;
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let all: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let mut reason = "no address";
            let allowed: Vec<SocketAddr> = all
                .iter()
                .copied()
                .filter(|a| match policy.check(a.ip()) {
                    Ok(()) => true,
                    Err(r) => {
                        reason = r;
                        false
                    }
                })
                .collect();
            if allowed.is_empty() {
                let addrs = all.iter().map(|a| a.ip().to_string()).collect::<Vec<_>>().join(", ");
                return Err(Box::new(PolicyRefusal { host, addrs, reason }) as Box<dyn std::error::Error + Send + Sync>);
            }
            Ok(Box::new(allowed.into_iter()) as Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_policy_refuses_internal_addresses() {
        let p = AddressPolicy::default();
        for bad in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "224.0.0.1",
            "255.255.255.255",
            "0.0.0.0",
            "100.64.0.1",
            "::1",
            "::",
            "fe80::1",
            "fd00::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "2002:7f00:1::",
        ] {
            assert!(p.check(bad.parse().unwrap()).is_err(), "{bad} should be refused");
        }
        for good in ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946", "8.8.8.8"] {
            assert!(p.check(good.parse().unwrap()).is_ok(), "{good} should be allowed");
        }
        let lo = AddressPolicy { allow_loopback: true, allow_private: false };
        assert!(lo.check("127.0.0.1".parse().unwrap()).is_ok());
        assert!(lo.check("10.0.0.1".parse().unwrap()).is_err());
    }

    #[test]
    fn literal_ips_and_localhost_in_urls() {
        let p = AddressPolicy::default();
        assert!(p.check_url(&Url::parse("http://127.0.0.1:8080/").unwrap()).is_err());
        assert!(p.check_url(&Url::parse("http://[::1]/").unwrap()).is_err());
        assert!(p.check_url(&Url::parse("http://localhost/").unwrap()).is_err());
        assert!(p.check_url(&Url::parse("http://0x7f000001/").unwrap()).is_err());
        assert!(p.check_url(&Url::parse("http://example.com/").unwrap()).is_ok());
    }
}

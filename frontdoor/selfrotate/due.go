package selfrotate

import (
	"crypto/x509"
	"time"
)

// Renewal happens once two thirds of a certificate's lifetime have passed:
// the last third is the overlap in which the old and the new certificate are
// both valid (and the old CA is still in the trust bundle).
const renewNumerator, renewDenominator = 2, 3

// renewAt is when c is due for replacement.
func renewAt(c *x509.Certificate) time.Time {
	life := c.NotAfter.Sub(c.NotBefore)
	return c.NotBefore.Add(life / renewDenominator * renewNumerator)
}

// CADue says whether the leader must mint a new CA: there is none, or the
// one in the Secret has passed two thirds of its lifetime.
func CADue(a *Authority, now time.Time) bool {
	return a == nil || !now.Before(renewAt(a.Cert))
}

// LeafDue says whether a replica must mint a new serving certificate: it has
// none, the one it has was not signed by the signing CA, or it has passed two
// thirds of its lifetime.
func LeafDue(leaf *x509.Certificate, signing *Authority, now time.Time) bool {
	if leaf == nil || signing == nil {
		return true
	}
	if leaf.CheckSignatureFrom(signing.Cert) != nil {
		return true
	}
	return !now.Before(renewAt(leaf))
}

package e2e

// chartCRDs are minimal CustomResourceDefinitions for the two foreign kinds the
// chart renders when cert-manager or the prometheus operator is switched on
// (charts/dynamic-config/tests/values/crd-features.yaml): cert-manager's
// Certificate (cert-manager.io/v1) and the prometheus operator's
// ServiceMonitor and PrometheusRule (monitoring.coreos.com/v1). The harness's apiserver has
// neither. They are written for this test from the two projects' documented
// API fields, not copied from the upstream CRDs: every documented field of the
// spec is listed (the ones the chart uses with their types, required fields
// and the enum of certificate usages; the rest as free-form objects), so a
// field the real CRD does not know is refused by strict field validation just
// as it would be on a cluster that runs the operators.
const chartCRDs = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: certificates.cert-manager.io
spec:
  group: cert-manager.io
  scope: Namespaced
  names: {plural: certificates, singular: certificate, kind: Certificate, listKind: CertificateList}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          required: [spec]
          properties:
            spec:
              type: object
              required: [secretName, issuerRef]
              properties:
                secretName: {type: string}
                commonName: {type: string}
                literalSubject: {type: string}
                dnsNames: {type: array, items: {type: string}}
                ipAddresses: {type: array, items: {type: string}}
                uris: {type: array, items: {type: string}}
                emailAddresses: {type: array, items: {type: string}}
                duration: {type: string}
                renewBefore: {type: string}
                renewBeforePercentage: {type: integer, format: int32}
                isCA: {type: boolean}
                encodeUsagesInRequest: {type: boolean}
                revisionHistoryLimit: {type: integer, format: int32}
                issuerRef:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string}
                    kind: {type: string}
                    group: {type: string}
                usages:
                  type: array
                  items:
                    type: string
                    enum: [signing, digital signature, content commitment, key encipherment,
                      key agreement, data encipherment, cert sign, crl sign, encipher only,
                      decipher only, any, server auth, client auth, code signing,
                      email protection, s/mime, ipsec end system, ipsec tunnel, ipsec user,
                      timestamping, ocsp signing, microsoft sgc, netscape sgc]
                subject: {type: object, x-kubernetes-preserve-unknown-fields: true}
                privateKey: {type: object, x-kubernetes-preserve-unknown-fields: true}
                secretTemplate: {type: object, x-kubernetes-preserve-unknown-fields: true}
                keystores: {type: object, x-kubernetes-preserve-unknown-fields: true}
                nameConstraints: {type: object, x-kubernetes-preserve-unknown-fields: true}
                otherNames:
                  type: array
                  items: {type: object, x-kubernetes-preserve-unknown-fields: true}
                additionalOutputFormats:
                  type: array
                  items: {type: object, x-kubernetes-preserve-unknown-fields: true}
            status: {type: object, x-kubernetes-preserve-unknown-fields: true}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: servicemonitors.monitoring.coreos.com
spec:
  group: monitoring.coreos.com
  scope: Namespaced
  names: {plural: servicemonitors, singular: servicemonitor, kind: ServiceMonitor, listKind: ServiceMonitorList}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          required: [spec]
          properties:
            spec:
              type: object
              required: [selector]
              properties:
                selector:
                  type: object
                  properties:
                    matchLabels: {type: object, additionalProperties: {type: string}}
                    matchExpressions:
                      type: array
                      items: {type: object, x-kubernetes-preserve-unknown-fields: true}
                namespaceSelector:
                  type: object
                  properties:
                    any: {type: boolean}
                    matchNames: {type: array, items: {type: string}}
                endpoints:
                  type: array
                  items:
                    type: object
                    properties:
                      port: {type: string}
                      targetPort: {x-kubernetes-int-or-string: true}
                      path: {type: string}
                      scheme: {type: string}
                      interval: {type: string, pattern: '^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$'}
                      scrapeTimeout: {type: string, pattern: '^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$'}
                      honorLabels: {type: boolean}
                      honorTimestamps: {type: boolean}
                      trackTimestampsStaleness: {type: boolean}
                      followRedirects: {type: boolean}
                      enableHttp2: {type: boolean}
                      filterRunning: {type: boolean}
                      bearerTokenFile: {type: string}
                      proxyUrl: {type: string}
                      noProxy: {type: string}
                      proxyFromEnvironment: {type: boolean}
                      params: {type: object, x-kubernetes-preserve-unknown-fields: true}
                      tlsConfig: {type: object, x-kubernetes-preserve-unknown-fields: true}
                      bearerTokenSecret: {type: object, x-kubernetes-preserve-unknown-fields: true}
                      authorization: {type: object, x-kubernetes-preserve-unknown-fields: true}
                      basicAuth: {type: object, x-kubernetes-preserve-unknown-fields: true}
                      oauth2: {type: object, x-kubernetes-preserve-unknown-fields: true}
                      proxyConnectHeader: {type: object, x-kubernetes-preserve-unknown-fields: true}
                      metricRelabelings:
                        type: array
                        items: {type: object, x-kubernetes-preserve-unknown-fields: true}
                      relabelings:
                        type: array
                        items: {type: object, x-kubernetes-preserve-unknown-fields: true}
                jobLabel: {type: string}
                targetLabels: {type: array, items: {type: string}}
                podTargetLabels: {type: array, items: {type: string}}
                sampleLimit: {type: integer, format: int64}
                targetLimit: {type: integer, format: int64}
                labelLimit: {type: integer, format: int64}
                labelNameLengthLimit: {type: integer, format: int64}
                labelValueLengthLimit: {type: integer, format: int64}
                keepDroppedTargets: {type: integer, format: int64}
                nativeHistogramBucketLimit: {type: integer, format: int64}
                nativeHistogramMinBucketFactor: {x-kubernetes-int-or-string: true}
                scrapeClassicHistograms: {type: boolean}
                convertClassicHistogramsToNHCB: {type: boolean}
                scrapeProtocols: {type: array, items: {type: string}}
                fallbackScrapeProtocol: {type: string}
                scrapeClass: {type: string}
                bodySizeLimit: {type: string}
                selectorMechanism: {type: string}
                serviceDiscoveryRole: {type: string}
                attachMetadata: {type: object, x-kubernetes-preserve-unknown-fields: true}
            status: {type: object, x-kubernetes-preserve-unknown-fields: true}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: prometheusrules.monitoring.coreos.com
spec:
  group: monitoring.coreos.com
  scope: Namespaced
  names: {plural: prometheusrules, singular: prometheusrule, kind: PrometheusRule, listKind: PrometheusRuleList}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          required: [spec]
          properties:
            spec:
              type: object
              properties:
                groups:
                  type: array
                  items:
                    type: object
                    required: [name]
                    properties:
                      name: {type: string, minLength: 1}
                      labels: {type: object, additionalProperties: {type: string}}
                      interval: {type: string}
                      query_offset: {type: string}
                      limit: {type: integer}
                      partial_response_strategy: {type: string}
                      rules:
                        type: array
                        items:
                          type: object
                          required: [expr]
                          properties:
                            record: {type: string}
                            alert: {type: string}
                            expr: {x-kubernetes-int-or-string: true}
                            for: {type: string, pattern: '^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$'}
                            keep_firing_for: {type: string}
                            labels: {type: object, additionalProperties: {type: string}}
                            annotations: {type: object, additionalProperties: {type: string}}
            status: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

// chartCRDNames are the CRDs of chartCRDs, to wait for.
var chartCRDNames = []string{
	"crd/certificates.cert-manager.io",
	"crd/servicemonitors.monitoring.coreos.com",
	"crd/prometheusrules.monitoring.coreos.com",
}

s|metricsCertPath := "/etc/kueue/metrics/certs"|metricsCertPath := raytpuMetricsCertDir()|

module troupe

go 1.26.8

require (
	github.com/NVIDIA/go-nvml v0.13.3-0
	github.com/spf13/cobra v1.10.2
	golang.org/x/text v0.43.0
	gopkg.in/yaml.v3 v3.0.1
)

require (
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
)

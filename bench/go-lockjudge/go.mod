module leasejudge.example/bench/go-lockjudge

go 1.19

require leasejudge v0.0.0

replace leasejudge => ../../bindings/go

module leasejudge.example/bench/go-baseline

go 1.19

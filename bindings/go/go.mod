module leasejudge

go 1.19

// ZipPIR, both sides (tests, benchmarks, tools). The provider includes zippir_server.h only.
#pragma once

#include "pir/zippir/zippir_client.h"
#include "pir/zippir/zippir_server.h"

import { Module } from '@nestjs/common';

import { HealthController } from './health.controller';
import { ReadingsController } from './readings.controller';
import { ReadingsService } from './readings.service';
import { WorkController } from './work.controller';

@Module({
  controllers: [HealthController, ReadingsController, WorkController],
  providers: [ReadingsService],
})
export class AppModule {}

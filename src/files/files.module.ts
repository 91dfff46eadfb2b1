import { Module } from '@nestjs/common';
import { FileUploadInterceptor } from './file-upload.interceptor.js';
import { FilesController } from './files.controller.js';
import { FilesRepository } from './files.repository.js';
import { FilesService } from './files.service.js';

/**
 * The Files API; vector stores and file_search read files' text through FilesService, the
 * erase-user command uses the repository in its transaction.
 */
@Module({
  controllers: [FilesController],
  providers: [FilesRepository, FilesService, FileUploadInterceptor],
  exports: [FilesService, FilesRepository],
})
export class FilesModule {}
